"""Real-world oddities: files that players open, made here from the shared clips as found in the
wild (raw streams named .mp4, fragmented and live-recorded files, phone rotation, variable rate,
broken indexes, odd audio). Each is read with the right size, length and frames, or refused with
a message that names what is wrong."""

from __future__ import annotations

import struct
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
import sqlite_utils

from backend.errors import InputError
from backend.ingest import decode, preview
from backend.ingest.pipeline import ingest
from backend.library import Library
from tests.conftest import clip, leftovers, settings_for

CAMPUS = "mot15_TUD-Campus.mp4"  # 71 frames at 25 fps, people walking from the first frame
SPEECH = "autoeditor_example_speech.mp4"


def _pictures(count: int, size: tuple[int, int] = (340, 256)) -> list[np.ndarray]:
    """The first `count` frames of TUD-Campus, RGB, at `size` (the datasets' 340x256)."""
    with av.open(str(clip(CAMPUS))) as source:
        frames = []
        for frame in source.decode(video=0):
            frames.append(frame.reformat(width=size[0], height=size[1]).to_ndarray(format="rgb24"))
            if len(frames) == count:
                return frames
    return frames


def _write(path: Path, pictures: list[np.ndarray], fmt: str, codec: str, rate: int = 25,
           times_ms: list[int] | None = None, options: dict | None = None) -> Path:
    """`pictures` as a `codec` stream in container `fmt` (options: the muxer's), each frame at
    i / rate, or at `times_ms` where given."""
    tick = Fraction(1, 1000) if times_ms else Fraction(1, rate)
    with av.open(str(path), "w", format=fmt, options=options or {}) as out:
        stream = out.add_stream(codec, rate=rate)
        stream.height, stream.width = pictures[0].shape[:2]
        stream.pix_fmt = "yuv420p"
        if times_ms:
            stream.codec_context.time_base = tick
        for i, rgb in enumerate(pictures):
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p")
            frame.pts, frame.time_base = (times_ms[i] if times_ms else i), tick
            out.mux(stream.encode(frame))
        out.mux(stream.encode())
    return path


def _rotate_flag(path: Path) -> Path:
    """Set the video track's display matrix to a quarter turn clockwise, as a phone held upright
    writes it over a landscape sensor picture."""
    data = bytearray(path.read_bytes())
    at = data.find(b"tkhd") + 4
    version = data[at]
    # version/flags, two dates, track id, reserved, duration, reserved, layer, group, volume, reserved
    at += 4 + (8 if version == 0 else 16) + 4 + 4 + (4 if version == 0 else 8) + 8 + 8
    data[at:at + 36] = struct.pack(">9i", 0, 65536, 0, -65536, 0, 0, 0, 0, 1 << 30)
    path.write_bytes(bytes(data))
    return path


def _with_audio(path: Path, pictures: list[np.ndarray], audio_seconds: float) -> Path:
    """An MP4 of `pictures` at 25 fps and `audio_seconds` of the speech clip's sound."""
    with av.open(str(clip(SPEECH))) as source, av.open(str(path), "w") as out:
        video = out.add_stream("libx264", rate=25)
        video.height, video.width = pictures[0].shape[:2]
        video.pix_fmt = "yuv420p"
        audio = out.add_stream("aac", rate=16000, layout="mono")
        for i, rgb in enumerate(pictures):
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, 25)
            out.mux(video.encode(frame))
        out.mux(video.encode())
        resample = av.AudioResampler(format="fltp", layout="mono", rate=16000)
        for sound in source.decode(audio=0):
            if sound.time >= audio_seconds:
                break
            for part in resample.resample(sound):
                out.mux(audio.encode(part))
        out.mux(audio.encode())
    return path


def _all_frames(path: Path, meta: decode.VideoMeta) -> list[np.ndarray]:
    return [rgb for _, _, rgb in decode.iter_frames(path, meta, range(meta.frames))]


# Raw elementary streams and live recordings declare no length: decord refused every one
# ("Failed to measure duration/frame-count due to broken metadata") though each decodes whole.
HEADERLESS = {
    "m4v.mp4": ("m4v", "mpeg4", {}),
    "annexb.mp4": ("h264", "libx264", {}),
    "live.webm": ("webm", "libvpx", {"live": "1"}),
    "live.mkv": ("matroska", "libx264", {"live": "1"}),
}


@pytest.mark.parametrize("name", list(HEADERLESS))
def test_a_file_that_declares_no_length_is_measured_by_its_frames(name, tmp_path):
    fmt, codec, options = HEADERLESS[name]
    pictures = _pictures(30)
    path = _write(tmp_path / name, pictures, fmt, codec, options=options)
    meta = decode.probe(path)
    assert (meta.frames, meta.fps, meta.width, meta.height) == (30, 25, 340, 256)
    assert meta.duration == pytest.approx(1.2)
    decoded = _all_frames(path, meta)
    assert len(decoded) == 30
    # Random access gives the frame the streaming pass numbered so.
    picked = decode.frames_at(path, meta, [0, 17, 29])
    assert all(np.array_equal(picked[i], decoded[i]) for i in (0, 17, 29))
    # A browser plays no raw stream, nor MPEG-4 Part 2: the player gets an H.264 MP4.
    if name in ("m4v.mp4", "annexb.mp4", "live.mkv"):
        assert preview.needs_preview(path, meta)
        preview.write_preview(path, meta, tmp_path / "preview.mp4")
        shown = decode.probe(tmp_path / "preview.mp4")
        assert (shown.frames, shown.codec) == (30, "h264") and shown.duration == pytest.approx(1.2)


def test_a_file_no_decoder_reads_names_both(tmp_path):
    """A raw MPEG-4 stream cut after its headers and one frame's start code: nothing decodes."""
    stream = _write(tmp_path / "whole.mp4", _pictures(2), "m4v", "mpeg4").read_bytes()
    path = tmp_path / "cut.mp4"
    path.write_bytes(stream[:stream.find(b"\x00\x00\x01\xb6")] + b"\x00\x00\x01\xb6" + bytes(300))
    with pytest.raises(InputError, match=r"'cut.mp4' could not be decoded by decord \(.*\) nor by "
                                         r"PyAV \(no frame decodes\)") as refused:
        decode.probe(path)
    assert str(tmp_path) not in str(refused.value)


def test_a_live_webm_names_itself_without_mangling_its_quotes():
    said = "[12:00:00] /src/video/video_reader.cc:151: [/tmp/recordings/live.webm] Failed to measure"
    assert decode._short(RuntimeError(said)) == "['live.webm'] Failed to measure"


def test_fragmented_mp4_and_an_avi_with_a_broken_index_read_whole(tmp_path):
    pictures = _pictures(30)
    fragmented = _write(tmp_path / "frag.mp4", pictures, "mp4", "libx264",
                        options={"movflags": "frag_keyframe+empty_moov"})
    avi = _write(tmp_path / "cam.avi", pictures, "avi", "mpeg4")
    data = bytearray(avi.read_bytes())
    at = data.find(b"idx1")
    data[at + 8:] = bytes(len(data) - at - 8)  # the index zeroed, as a crashed recorder leaves it
    avi.write_bytes(bytes(data))
    for path in (fragmented, avi):
        meta = decode.probe(path)
        assert (meta.frames, meta.duration) == (30, pytest.approx(1.2)), path.name
        assert len(_all_frames(path, meta)) == 30


def test_a_variable_rate_file_lasts_as_long_as_its_frames_and_the_player_agrees(tmp_path):
    """15 frames 40 ms apart, then 15 frames 100 ms apart, timed in milliseconds (as MKV is):
    the header's 1000 fps made it a 0.03 s video. Its length is its frames' span; the player gets
    a copy at an even rate, so frame i plays at i / fps, where ingest put it."""
    times = [40 * i for i in range(15)] + [600 + 100 * i for i in range(15)]
    path = _write(tmp_path / "vfr.mkv", _pictures(30), "matroska", "libx264", rate=1000,
                  times_ms=times)
    meta = decode.probe(path)
    assert meta.frames == 30 and meta.duration == pytest.approx(2.0, abs=0.15)
    assert preview.needs_preview(path, meta)
    preview.write_preview(path, meta, tmp_path / "preview.mp4")
    shown = decode.probe(tmp_path / "preview.mp4")
    assert shown.frames == 30 and shown.duration == pytest.approx(meta.duration, abs=0.05)


def test_a_rotated_phone_video_is_read_upright(tmp_path):
    """The sensor's landscape picture stored with a quarter-turn flag: decord turned it, the
    streaming pass did not, so the stored size and the boxes were in two orientations."""
    landscape = _pictures(10, size=(320, 240))
    stored = [np.ascontiguousarray(np.rot90(p, 1)) for p in landscape]  # as the sensor holds it
    path = _rotate_flag(_write(tmp_path / "phone.mp4", stored, "mp4", "libx264"))
    meta = decode.probe(path)
    assert (meta.width, meta.height) == (320, 240)
    streamed = _all_frames(path, meta)
    assert all(f.shape == (240, 320, 3) for f in streamed)
    assert np.abs(streamed[0].astype(int) - landscape[0]).mean() < 8  # upright, as shown
    picked = decode.frames_at(path, meta, [9])[9]
    assert np.abs(picked.astype(int) - streamed[9]).mean() < 2


def test_one_frame_no_audio_and_audio_longer_than_the_picture(tmp_path):
    single = decode.probe(_write(tmp_path / "one.mp4", _pictures(1), "mp4", "libx264"))
    assert (single.frames, single.has_audio) == (1, False)
    assert single.duration == pytest.approx(0.04)
    longer = decode.probe(_with_audio(tmp_path / "talk.mp4", _pictures(25), audio_seconds=3))
    assert longer.has_audio and longer.duration == pytest.approx(1.0)  # the picture's length


def test_audio_without_video_is_refused_by_name(tmp_path):
    path = tmp_path / "song.mp4"
    with av.open(str(clip(SPEECH))) as source, av.open(str(path), "w") as out:
        audio = out.add_stream("aac", rate=16000, layout="mono")
        resample = av.AudioResampler(format="fltp", layout="mono", rate=16000)
        for sound in source.decode(audio=0):
            if sound.time >= 1:
                break
            for part in resample.resample(sound):
                out.mux(audio.encode(part))
        out.mux(audio.encode())
    with pytest.raises(InputError, match="'song.mp4' has no video stream"):
        decode.probe(path)


@pytest.mark.parametrize("side", [1, 2, 16])
def test_a_video_too_small_to_see_in_is_refused_up_front(side, tmp_path):
    """1x1 and 2x2 videos went through every stage and failed at the thumbnail with a raw
    TypeError; now the probe refuses them, so nothing is written."""
    pictures = [np.full((side, side, 3), 90, np.uint8)] * 3
    path = _write(tmp_path / f"dot{side}.mkv", pictures, "matroska", "ffv1")
    settings = settings_for(tmp_path / "library")
    with pytest.raises(InputError, match=f"'dot{side}.mkv' is {side}x{side} pixels: too small"):
        ingest(path, settings)
    assert not Library(settings.home).list() and not leftovers(settings)


def _people(settings, done) -> tuple[dict, list[tuple]]:
    entry = Library(settings.home).get(done.video_id)
    db = sqlite_utils.Database(entry.db_path)
    video = next(db["video"].rows)
    boxes = db.execute("select x1, y1, x2, y2 from detections").fetchall()
    return video, boxes


def _person_count(settings, done) -> int:
    entry = Library(settings.home).get(done.video_id)
    return sqlite_utils.Database(entry.db_path)["instances"].count_where("category = 'person'")


@pytest.mark.parametrize("name", ["v_walk_g01_c01.mp4", "screen.webm"])
def test_a_file_that_declares_no_length_is_ingested_with_its_people(name, tmp_path):
    """The action datasets' clips (raw MPEG-4 Part 2 at 340x256, 25 fps, no container) and a
    browser's screen recording (a live WebM, no duration stored): both were refused."""
    fmt, codec, options = {"v_walk_g01_c01.mp4": ("m4v", "mpeg4", {}),
                           "screen.webm": ("webm", "libvpx", {"live": "1"})}[name]
    path = _write(tmp_path / name, _pictures(71), fmt, codec, options=options)
    settings = settings_for(tmp_path / "library", asr_enabled=False, ocr_enabled=False)
    done = ingest(path, settings)
    assert done.duration == pytest.approx(71 / 25)
    video, _ = _people(settings, done)
    assert (video["width"], video["height"], video["frames"]) == (340, 256, 71)
    assert _person_count(settings, done) >= 3, "TUD-Campus shows people from its first frame"
    entry = Library(settings.home).get(done.video_id)
    assert entry.playable.suffix in (".mp4", ".webm") and not leftovers(settings)
    if name.endswith(".mp4"):  # a raw stream: the player gets an H.264 MP4
        assert entry.playable.name == "preview.mp4"


def test_one_frame_keeps_its_people_and_sound_past_the_picture_is_left_out(tmp_path):
    """A single frame is a photo: the people in it were dropped as tracks too short to be real.
    A recorder that kept the sound on: speech was placed up to 8 s into a 1 s video."""
    settings = settings_for(tmp_path / "library", ocr_enabled=False)
    single = ingest(_write(tmp_path / "one.mp4", _pictures(1), "mp4", "libx264"), settings)
    assert single.duration == pytest.approx(0.04) and _person_count(settings, single) >= 1
    talk = ingest(_with_audio(tmp_path / "talk.mp4", _pictures(25), audio_seconds=8), settings)
    assert talk.duration == pytest.approx(1.0)
    entry = Library(settings.home).get(talk.video_id)
    ends = [row[0] for row in sqlite_utils.Database(entry.db_path).execute(
        "SELECT t_end FROM speech UNION ALL SELECT t_end FROM speech_words")]
    assert all(end <= 1.0 + 0.05 for end in ends), ends


def test_a_rotated_phone_video_is_ingested_upright_with_boxes_in_that_frame(tmp_path):
    stored = [np.ascontiguousarray(np.rot90(p, 1)) for p in _pictures(50, size=(320, 240))]
    path = _rotate_flag(_write(tmp_path / "phone.mp4", stored, "mp4", "libx264"))
    settings = settings_for(tmp_path / "library", asr_enabled=False, ocr_enabled=False)
    done = ingest(path, settings)
    video, boxes = _people(settings, done)
    assert (video["width"], video["height"]) == (320, 240)
    assert _person_count(settings, done) >= 3 and boxes
    assert max(b[2] for b in boxes) <= 320 and max(b[3] for b in boxes) <= 240
