"""Animated GIF and WebP in like any video: re-timed onto a constant frame rate and written as MP4.

Screen captures and short clips are often shared as GIFs, whose frames each carry their own delay
(10 ms to seconds). Ingest, the tracker's motion model and the timeline all assume frame i is at
i / fps, so the animation is resampled once at a steady rate: each output frame shows the source
frame on screen at that moment, as a browser would, and the MP4 is what the library keeps, plays
and ingests. Pillow reads both formats with their per-frame durations (FFmpeg's WebP decoder
reads no animation).
"""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
from PIL import Image, ImageSequence, UnidentifiedImageError

from backend.errors import InputError

EXTENSIONS = {".gif", ".webp"}
# Browsers show frames of 10 ms or less for 100 ms (a GIF with no delay set means "as fast as
# you can", which nobody meant); the same rule keeps such a file from becoming 100 fps.
_SHORTEST_MS, _DEFAULT_MS = 10, 100
MAX_FPS = 30
# An upload's size is checked as a file; its frames expand it. This bounds the decoded video
# (20 minutes at MAX_FPS) so a small, highly compressible file cannot fill the disk.
MAX_FRAMES = 36_000
# A GIF states its canvas in four bytes: 85 bytes declared 12000x12000 and decoding took 5.4 GB,
# since every frame is held whole at canvas size (3 bytes a pixel, and copies while converting).
# The canvas is bounded before a frame is decoded (4K), and canvas x frames before encoding
# (20 minutes of 720p), so neither memory nor the encode grows past what a real clip needs.
MAX_CANVAS = 3840 * 2160
MAX_PIXELS = 1280 * 720 * MAX_FRAMES


def is_animated_image(path: Path) -> bool:
    return Path(path).suffix.lower() in EXTENSIONS


def to_video(path: Path, out: Path) -> Path:
    """Write the animation at `path` as an H.264 MP4 at `out` and return `out`; InputError for a
    file that is no image, a still image, or one that would decode too long."""
    path = Path(path)
    try:
        with Image.open(path) as image:
            _check_canvas(path, image.size)
            durations = [_duration(frame) for frame in ImageSequence.Iterator(image)]
            if len(durations) < 2:
                raise InputError(f"'{path.name}' is a still image, not an animation: upload a "
                                 f"video, or an animated GIF or WebP.")
            fps = min(MAX_FPS, max(1, round(1000 / min(durations))))
            total = round(sum(durations) / 1000 * fps)
            if total > MAX_FRAMES:
                raise InputError(f"'{path.name}' plays for {sum(durations) / 1000:.0f} s, which "
                                 f"makes {total} frames at {fps} fps; the limit is {MAX_FRAMES}.")
            if total * image.size[0] * image.size[1] > MAX_PIXELS:
                raise InputError(f"'{path.name}' would make {total} frames of {image.size[0]}x"
                                 f"{image.size[1]}: more pixels than 20 minutes of 720p, the limit.")
            _write(image, durations, fps, max(total, 1), out)
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError) as e:
        raise InputError(f"'{path.name}' could not be read as an animated image: {e}") from e
    return out


def _check_canvas(path: Path, size: tuple[int, int]) -> None:
    width, height = size
    if width * height > MAX_CANVAS:
        raise InputError(f"'{path.name}' declares a {width}x{height} canvas: each frame would take "
                         f"{width * height * 3 / 2**20:.0f} MiB to decode; the limit is 3840x2160 "
                         f"pixels ({MAX_CANVAS * 3 / 2**20:.0f} MiB).")


def _duration(frame: Image.Image) -> int:
    frame.load()  # WebP sets a frame's duration only once the frame is loaded
    ms = int(frame.info.get("duration") or 0)
    return _DEFAULT_MS if ms <= _SHORTEST_MS else ms


def _write(image: Image.Image, durations: list[int], fps: int, total: int, out: Path) -> None:
    ends = np.cumsum(durations)
    width, height = image.size
    with av.open(str(out), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        # yuv420p, which every player takes, needs even sides: pad by a pixel where odd.
        stream.width, stream.height = width + width % 2, height + height % 2
        stream.pix_fmt = "yuv420p"
        stream.options = {"crf": "18", "preset": "veryfast"}
        shown = -1
        for k in range(total):
            # The source frame on screen at k / fps: the first whose end is after it.
            index = min(int(np.searchsorted(ends, 1000 * k / fps, side="right")), len(ends) - 1)
            if index != shown:
                image.seek(index)
                rgb = np.asarray(image.convert("RGB"))
                if rgb.shape[:2] != (stream.height, stream.width):
                    rgb = np.pad(rgb, ((0, stream.height - height), (0, stream.width - width), (0, 0)),
                                 mode="edge")
                picture = av.VideoFrame.from_ndarray(rgb, format="rgb24")
                shown = index
            container.mux(stream.encode(picture))
        container.mux(stream.encode())
