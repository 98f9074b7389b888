"""Animated GIF and WebP uploads ingest like videos, at their own frame timings."""

from __future__ import annotations

import struct
import subprocess
import sys

import pytest
import sqlite_utils
from PIL import Image

from backend.errors import InputError
from backend.ingest import animated, decode
from backend.ingest.pipeline import ingest
from backend.library import Library
from tests.conftest import REPO, clip, settings_for


def _frames_of(name: str, every: int) -> list[Image.Image]:
    """Every `every`-th frame of a shared clip, as images."""
    meta = decode.probe(clip(name))
    wanted = list(range(0, meta.frames, every))
    frames = decode.frames_at(clip(name), meta, wanted)
    return [Image.fromarray(frames[i]).resize((320, 240)) for i in wanted]


def test_an_animation_is_retimed_at_its_own_delays(tmp_path):
    """Frames of 100, 400 and 100 ms: the video lasts their sum, and the long frame holds the
    picture for four times as many video frames."""
    colours = [(200, 0, 0), (0, 200, 0), (0, 0, 200)]
    for fmt in ("GIF", "WEBP"):
        path = tmp_path / f"three.{fmt.lower()}"
        images = [Image.new("RGB", (101, 75), c) for c in colours]  # odd sides: padded to even
        images[0].save(path, fmt, save_all=True, append_images=images[1:], duration=[100, 400, 100])
        video = animated.to_video(path, tmp_path / f"{fmt}.mp4")
        meta = decode.probe(video)
        assert meta.duration == pytest.approx(0.6, abs=0.01) and meta.fps == 10
        frames = decode.frames_at(video, meta, list(range(meta.frames)))
        greens = [i for i, f in frames.items() if f[30, 50, 1] > 150 and f[30, 50, 0] < 60]
        assert greens == [1, 2, 3, 4], fmt


def test_a_still_image_is_refused_by_name(tmp_path):
    path = tmp_path / "photo.gif"
    Image.new("RGB", (64, 48), (10, 20, 30)).save(path)
    with pytest.raises(InputError, match="still image, not an animation"):
        animated.to_video(path, tmp_path / "out.mp4")
    broken = tmp_path / "broken.webp"
    broken.write_bytes(b"RIFF\x10\x00\x00\x00WEBPVP8 garbage")
    with pytest.raises(InputError, match="could not be read as an animated image"):
        animated.to_video(broken, tmp_path / "out2.mp4")


def test_an_animated_gif_of_a_street_is_ingested_with_its_people(tmp_path):
    """TUD-Campus as a GIF of every fifth frame at 200 ms each (its own pace): a video of that
    length in the library, playable, whose people are tracked as in the clip itself."""
    settings = settings_for(tmp_path / "library")
    path = tmp_path / "campus.gif"
    images = _frames_of("mot15_TUD-Campus.mp4", 5)
    images[0].save(path, "GIF", save_all=True, append_images=images[1:], duration=200, loop=0)
    result = ingest(path, settings)
    assert result.name == "campus.gif" and result.duration == pytest.approx(len(images) * 0.2,
                                                                             abs=0.05)
    entry = Library(settings.home).get(result.video_id)
    assert (entry.folder / "source.mp4").is_file()
    people = sqlite_utils.Database(entry.db_path)["instances"].count_where("category = 'person'")
    assert people >= 3, "TUD-Campus shows several people walking from its first seconds"


def _declared_canvas_gif(width: int, height: int) -> bytes:
    """A two-frame GIF of 1x1 pictures on a canvas of width x height: 85 bytes at 12000x12000."""
    frame = b"!\xf9\x04\x04\x0a\x00\x00\x00," + struct.pack("<4H", 0, 0, 1, 1) + b"\x00\x02\x02D\x01\x00"
    return (b"GIF89a" + struct.pack("<HHBBB", width, height, 0x80, 0, 0) + b"\x00" * 3 + b"\xff" * 3
            + b"!\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00" + frame * 2 + b";")


def test_a_gif_declaring_a_huge_canvas_is_refused_before_decoding(tmp_path):
    """85 bytes declaring 12000x12000 took 5.4 GB to decode: refused, in a process allowed 2 GiB
    of address space (more than the check needs, far less than the decode)."""
    path = tmp_path / "bomb.gif"
    path.write_bytes(_declared_canvas_gif(12000, 12000))
    assert len(path.read_bytes()) == 85
    script = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
              "from backend.ingest import animated\nfrom backend.errors import InputError\n"
              "try:\n    animated.to_video(sys.argv[1], sys.argv[2])\n"
              "except InputError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", script, str(path), str(tmp_path / "out.mp4")],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "'bomb.gif' declares a 12000x12000 canvas" in done.stdout, done.stderr[-500:]
    assert "limit is 3840x2160" in done.stdout and not (tmp_path / "out.mp4").exists()
