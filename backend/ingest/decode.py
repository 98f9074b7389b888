"""Video probing (decord, PyAV) and streaming frame sampling (PyAV).

Frames are decoded one at a time and only the sampled ones are converted, so memory does not
grow with the length of the video. Every way a file can fail to decode becomes an InputError with a
message a user understands.

decord measures a video by what its container declares; a stream with no container (raw MPEG-4
Part 2 or H.264 saved as .mp4) or a live WebM/MKV (no stored duration) declares nothing and decord
refuses it though every frame decodes. Those are measured by PyAV instead, by demuxing: a file is
refused only when neither decoder reads it. Frames come upright: decord applies a rotation flag
(phones, screen recorders) and the PyAV pass turns its frames the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Iterator

import av
import decord
import numpy as np

from backend.errors import InputError

@dataclass(frozen=True)
class VideoMeta:
    fps: float
    frames: int
    duration: float
    width: int
    height: int
    has_audio: bool
    codec: str
    # False where frames are not evenly spaced in time (phones in low light, screen recorders):
    # ingest numbers frame i at i / fps all the same, so the player needs a copy timed that way.
    steady: bool = True

    @classmethod
    def from_row(cls, video: dict) -> "VideoMeta":
        """From a library video's `video` table row (no decoding)."""
        return cls(fps=video["fps"], frames=video["frames"], duration=video["duration"],
                   width=video["width"], height=video["height"],
                   has_audio=bool(video["has_audio"]), codec=video["codec"])


def _container_facts(path: Path) -> tuple[str, bool, int]:
    """(video codec, has audio, frames the header declares or 0), with a specific error per failure."""
    try:
        with av.open(str(path)) as container:
            videos = container.streams.video
            if not videos:
                raise InputError(f"'{path.name}' has no video stream (is it an audio or other file?).")
            codec_ctx = videos[0].codec_context
            codec = codec_ctx.name if codec_ctx is not None else ""
            declared = int(videos[0].frames or 0)
            has_audio = bool(container.streams.audio)
    except InputError:
        raise
    except av.error.InvalidDataError as e:
        if _looks_like_mp4(path):
            raise InputError(f"'{path.name}' is an MP4/MOV file whose index is missing: it looks "
                             "truncated (an interrupted download or copy?).") from e
        raise InputError(f"'{path.name}' is not a video file FFmpeg can read ({e.strerror or e}).") from e
    except (av.error.FFmpegError, OSError) as e:
        raise InputError(f"'{path.name}' could not be opened as a video: {_short(e)}.") from e
    if not codec or codec in {"none", "unknown"}:
        raise InputError(f"'{path.name}' uses a video codec this build cannot decode.")
    try:
        av.codec.Codec(codec, "r")
    except Exception as e:
        raise InputError(f"'{path.name}' uses the video codec '{codec}', which this build cannot decode.") from e
    return codec, has_audio, declared


# Containers a browser plays whole, as libavformat names them; a raw stream is none of these.
_BROWSER_CONTAINERS = {"mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm"}
# The detectors, OCR and the thumbnail all shrink or tile the picture: below this side nothing
# is left to see, and they fail on it rather than find nothing.
MIN_SIDE = 17


def in_browser_container(path: Path) -> bool:
    try:
        with av.open(str(path)) as container:
            return container.format.name in _BROWSER_CONTAINERS
    except (av.error.FFmpegError, OSError):
        return False


def _looks_like_mp4(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(12)[4:8] == b"ftyp"


def frames_at(path: Path, meta: VideoMeta, indices: list[int]) -> dict[int, np.ndarray]:
    """{index: RGB frame} numbered as ingest numbers them (the i-th decoded frame).

    decord's random access is exact only in MP4/MOV, whose sample tables place every frame; in
    other containers (the AVI dev clip: from frame 120 on) it lands on neighbouring frames, so
    those are decoded in one sequential pass instead."""
    wanted = sorted({i for i in indices if 0 <= i < meta.frames})
    if _looks_like_mp4(Path(path)):
        try:
            reader = open_reader(path)
        except InputError:  # a file decord cannot measure is numbered by the pass below
            reader = None
        # Where the container declares frames its edit list hides, decord counts them and
        # PyAV, which numbered the frames at ingest, does not: read them in PyAV's order.
        if reader is not None and len(reader) == meta.frames:
            return {i: reader[i].asnumpy() for i in wanted}
    return {i: frame for i, _, frame in iter_frames(path, meta, wanted)}


def seeks_exactly(path: Path) -> bool:
    """Whether `frames_at` reaches a frame without decoding the video up to it."""
    return _looks_like_mp4(Path(path))


def spread_frames(path: Path, meta: VideoMeta, indices: list[int], count: int) -> list[np.ndarray]:
    """`count` of the sampled frames spread evenly through the video, where the
    container seeks exactly (MP4/MOV); none elsewhere, where reaching them means decoding the
    video up to them an extra time."""
    if count < 1 or len(indices) <= count or not _looks_like_mp4(Path(path)):
        return []
    picks = [indices[len(indices) * (k + 1) // (count + 1)] for k in range(count)]
    try:
        return list(frames_at(path, meta, picks).values())
    except (decord.DECORDError, InputError):
        # A look ahead only: the pass over the frames that follows names the damage.
        return []


def open_reader(path: Path) -> decord.VideoReader:
    try:
        return decord.VideoReader(str(path), num_threads=1)
    except decord.DECORDError as e:
        raise InputError(f"'{path.name}' could not be decoded: the file looks truncated or corrupt ({_short(e)}).") from e


def probe(path: Path) -> VideoMeta:
    """Check that `path` is a decodable video and read its facts. Decodes first and last frames."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"'{path}' does not exist or is not a file.")
    if path.stat().st_size == 0:
        raise InputError(f"'{path.name}' is empty (0 bytes).")
    codec, has_audio, declared = _container_facts(path)
    try:
        reader = decord.VideoReader(str(path), num_threads=1)
    except decord.DECORDError as e:
        return _probe_by_demuxing(path, codec, has_audio, _short(e))
    frames = len(reader)
    fps = float(reader.get_avg_fps() or 0.0)
    if frames <= 0 or fps <= 0:
        raise InputError(f"'{path.name}' contains no decodable video frames.")
    # Containers without a trailing index (AVI) still open when cut short; their header knows better.
    if declared > frames * 1.02 + 1:
        raise InputError(
            f"'{path.name}' is truncated: its header declares {declared} frames "
            f"({declared / fps:.1f} s) but only {frames} ({frames / fps:.1f} s) are present.")
    for index in (0, frames - 1):
        _decode_one(reader, index, path, fps)
    height, width = reader[0].shape[:2]
    _check_size(path, int(width), int(height))
    return _timed(VideoMeta(fps=fps, frames=frames, duration=frames / fps, width=int(width),
                            height=int(height), has_audio=has_audio, codec=codec),
                  _frame_times(path))


def _probe_by_demuxing(path: Path, codec: str, has_audio: bool, refused: str) -> VideoMeta:
    """PyAV's measure of a file decord refused: frames counted by demuxing, the rate the stream
    states or ffmpeg guesses from its timestamps, the size of the first frame as decoded."""
    try:
        times, fps, first = _demux(path)
    except av.error.FFmpegError as e:
        raise _unreadable(path, refused, _short(e)) from e
    if first is None or not times:
        raise _unreadable(path, refused, "no frame decodes")
    if fps <= 0:
        raise _unreadable(path, refused, "the stream states no frame rate")
    height, width = first.shape[:2]
    _check_size(path, width, height)
    frames = len(times)
    return _timed(VideoMeta(fps=fps, frames=frames, duration=frames / fps, width=width,
                            height=height, has_audio=has_audio, codec=codec), times)


def _demux(path: Path) -> tuple[list[float | None], float, np.ndarray | None]:
    """(each frame's time, frame rate, first frame upright), frames counted by demuxing."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        times = [None if packet.pts is None else float(packet.pts * packet.time_base)
                 for packet in container.demux(stream) if packet.size]  # empty ones flush
        fps = float(stream.guessed_rate or stream.average_rate or 0)
    with av.open(str(path)) as container:
        first = next(container.decode(video=0), None)
        return times, fps, None if first is None else _upright(first)


def _frame_times(path: Path) -> list[float | None]:
    try:
        return _demux(path)[0]
    except av.error.FFmpegError:  # decord read it: its count and rate stand
        return []


def _timed(meta: VideoMeta, times: list[float | None]) -> VideoMeta:
    """`meta` with the mean rate of the frames' own times where they are not at i / fps (by half
    a frame or more): a variable-rate file, or one whose header states a rate its frames do not
    keep (an MKV timed in milliseconds reads as 1000 fps). Frames with no time (raw H.264) keep
    the stated rate."""
    if len(times) != meta.frames or len(times) < 2 or None in times:
        return meta
    times = sorted(times)
    span = times[-1] - times[0]
    late = max(abs(t - times[0] - i / meta.fps) for i, t in enumerate(times))
    if span <= 0 or late < 0.5 / meta.fps:
        return meta
    fps = (len(times) - 1) / span
    return replace(meta, fps=fps, duration=meta.frames / fps, steady=False)


def _unreadable(path: Path, decord_said: str, pyav_said: str) -> InputError:
    return InputError(f"'{path.name}' could not be decoded by decord ({decord_said}) nor by PyAV "
                      f"({pyav_said}): the file looks truncated or corrupt.")


def _check_size(path: Path, width: int, height: int) -> None:
    if min(width, height) < MIN_SIDE:
        raise InputError(f"'{path.name}' is {width}x{height} pixels: too small to see anything "
                         f"in (each side must be at least {MIN_SIDE} pixels).")


def _upright(frame: av.VideoFrame) -> np.ndarray:
    """The frame as RGB, turned as its rotation flag says it is shown (as decord turns it)."""
    rgb = frame.to_ndarray(format="rgb24")
    turns = round(frame.rotation / 90) % 4
    return np.ascontiguousarray(np.rot90(rgb, turns)) if turns else rgb


def sample_step(meta: VideoMeta, fps: float) -> int:
    """Frames between samples at about `fps`: a whole number, so samples are evenly spaced in
    time (a tracker's motion model assumes it; 12.5 fps at 2.5 frames a step alternated 0.16 s
    and 0.24 s), and never faster than the video itself."""
    return max(1, round(meta.fps / fps)) if fps > 0 else max(1, meta.frames)


def sampled_fps(meta: VideoMeta, fps: float) -> float:
    """The rate `sample_indices` really samples at."""
    return meta.fps / sample_step(meta, fps)


def sample_indices(meta: VideoMeta, fps: float) -> list[int]:
    """Frame indices at about `fps`, evenly spaced (`sample_step`), starting at frame 0."""
    return list(range(0, meta.frames, sample_step(meta, fps)))


def iter_frames(path: Path, meta: VideoMeta, indices: Iterable[int],
                decoded: list[int] | None = None) -> Iterator[tuple[int, float, np.ndarray]]:
    """Yield (frame index, seconds, RGB frame) for `indices`, decoding sequentially.

    The streaming pass decodes with PyAV rather than decord: decord's decoder threads keep
    spinning between calls and, interleaved with detection, made the detector three times
    slower here (327 vs 107 ms a frame); decord stays for probing and random access.
    Frame i is the i-th decoded frame, as decord counts them, turned upright as decord turns it.

    A stream that ends cleanly before the frames its container declares (an MP4 trimmed or
    re-encoded with an edit list: 467 declared, 459 shown) is not damaged: every frame that
    decodes is given, and the count decoded is appended to `decoded`. A decoding error is.
    """
    path = Path(path)
    wanted = iter(indices)
    target = next(wanted, None)
    index = -1
    try:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            for frame in container.decode(stream):
                index += 1
                if target is None:
                    return
                if index == target:
                    yield index, index / meta.fps, _upright(frame)
                    target = next(wanted, None)
    except av.error.FFmpegError as e:
        raise _damaged(path, index + 1, meta.fps, _short(e)) from e
    if index < 0:
        raise _damaged(path, 0, meta.fps, "no frame decodes")
    if decoded is not None:
        decoded.append(index + 1)


def _damaged(path: Path, index: int, fps: float, reason: str) -> InputError:
    return InputError(f"'{path.name}' fails to decode from frame {index} ({index / fps:.1f} s) on: "
                      f"the file is damaged part-way ({reason}).")


def _decode_one(reader: decord.VideoReader, index: int, path: Path, fps: float) -> None:
    try:
        reader[index].asnumpy()
    except decord.DECORDError as e:
        raise _damaged(path, index, fps, _short(e)) from e


def _short(error: Exception) -> str:
    """The reason only: no timestamp, no source location, no file path (messages are shown to
    users, and a path tells them nothing they did not give, or more than they should see)."""
    text = getattr(error, "strerror", None) or str(error) or type(error).__name__
    text = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    # decord: "[12:00:00] /src/video/video_reader.cc:151: ERROR opening: /tmp/x.mp4, reason"
    text = _DECORD_PREFIX.sub("", text)
    text = _ABSOLUTE_PATH.sub(_file_name_only, text)
    return text.strip(" .")[:120] or type(error).__name__


_DECORD_PREFIX = re.compile(r"^\[[^\]]*\]\s*\S+:\d+:\s*")
# Brackets end a path: decord writes "[/tmp/x.webm] Failed ...".
_ABSOLUTE_PATH = re.compile(r"(?<![\w.])'?((?:/[^/\s,:'\"\[\]]+){2,})'?")  # two or more parts: /a/b


def _file_name_only(match: re.Match) -> str:
    path = match.group(1)
    core = path.rstrip(".")  # "Error reading /tmp/x.mp4..." keeps its dots after the name
    return f"'{Path(core).name}'{path[len(core):]}"
