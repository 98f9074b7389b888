"""Variants of a MOT sequence whose ground truth follows exactly: more real truth than two clips.

Two sequences of large people are what the defaults were tuned on; users bring small people from
high cameras, dark scenes, mirrored views, low frame rates and heavy compression. Each variant
here changes every frame and moves every ground-truth box with it, so the truth stays exact:

- `0.5x`, `0.35x`: the picture shrunk inside a canvas of the original size, the rest a still
  background (the sequence's median frame blurred past recognition, so it holds nobody);
- `mirrored`: flipped horizontally, so every direction of motion flips;
- `dark`: every pixel at a third of its brightness;
- `half-fps`: every second frame only;
- `low-bitrate`: re-encoded at 150 kbit/s (blocks and smeared edges);
- `pan` (asked for by name, not among "all"): a window three quarters of the width wide
  sliding from the left edge to the right over the sequence, as a camera panning across a still
  scene (people wholly outside it leave the truth).

Variants are written once into a MOT-layout folder under `root` (video, gt.txt, seqinfo.ini),
named after the source video's content hash, so `tracking.sequence_at` reads them as it reads
the originals and a changed source makes new ones.
"""

from __future__ import annotations

import configparser
import itertools
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from backend.errors import UsageError
from backend.evaluation.tracking import Sequence, sequence_at
from backend.library import content_hash


@dataclass(frozen=True)
class Variant:
    name: str
    scale: float = 1.0          # the picture's size inside the original canvas
    mirror: bool = False
    brightness: float = 1.0     # every pixel times this
    frame_step: int = 1         # keep every k-th frame
    bitrate: int = 0            # bits per second of the re-encoding; 0 = near-lossless
    pan: float = 0.0            # share of the width a window this much narrower slides across

    def box(self, x: float, y: float, w: float, h: float, width: int,
            height: int, at: float = 0.0) -> tuple[float, float, float, float]:
        """A ground-truth box (left, top, width, height) as it lies in the variant's frame;
        `at`: how far through the sequence its frame is (0 to 1), for a pan."""
        if self.mirror:
            x = width - x - w
        left, top = _offset(width, height, self.scale)
        return (left + x * self.scale - self.window(width, at), top + y * self.scale,
                w * self.scale, h * self.scale)

    def width(self, width: int) -> int:
        """The variant's frame width: the pan's window, even for the encoder."""
        return width if not self.pan else 2 * round(width * (1 - self.pan) / 2)

    def window(self, width: int, at: float) -> int:
        """The pan window's left edge at `at` (0 to 1) through the sequence."""
        return round((width - self.width(width)) * at)


VARIANTS = (
    Variant("0.5x", scale=0.5),
    Variant("0.35x", scale=0.35),
    Variant("mirrored", mirror=True),
    Variant("dark", brightness=1 / 3),
    Variant("half-fps", frame_step=2),
    Variant("low-bitrate", bitrate=150_000),
)
# By name only: the measured tables were made over the six above, and a pan makes a still
# scene's camera a moving one (another condition of the confidence contract).
PAN = Variant("pan", pan=0.25)
BY_NAME = {v.name: v for v in (*VARIANTS, PAN)}

_QUALITY_BITRATE = 8_000_000  # high enough that re-encoding itself changes nothing a detector sees
_BLUR_SIZE = (16, 12)         # the background's detail: coarser than any person


def chosen(names: str) -> tuple[Variant, ...]:
    """The variants named, comma-separated ("all": every one; "none": none)."""
    if names in ("all", "none"):
        return VARIANTS if names == "all" else ()
    unknown = [n.strip() for n in names.split(",") if n.strip() not in BY_NAME]
    if unknown:
        raise UsageError(f"--variants: no variant {unknown[0]!r}; the variants are "
                         f"{', '.join(BY_NAME)}.")
    return tuple(BY_NAME[n.strip()] for n in names.split(","))


def _offset(width: int, height: int, scale: float) -> tuple[int, int]:
    """Where the shrunk picture's top-left corner sits: the canvas's centre."""
    return round(width * (1 - scale) / 2), round(height * (1 - scale) / 2)


def variant_of(sequence: Sequence, variant: Variant, root: Path) -> Sequence:
    """The sequence as `variant` shows it, made under `root` on first use."""
    folder = Path(root) / f"{sequence.name}-{variant.name}-{content_hash(sequence.video)[:12]}"
    if not (folder / "seqinfo.ini").is_file():
        staging = folder.with_name(folder.name + ".partial")
        staging.mkdir(parents=True, exist_ok=True)
        name = f"{sequence.name}-{variant.name}"
        width, height, frames = _write_video(sequence, variant, staging / f"{name}.mp4")
        _write_truth(sequence, variant, staging / "gt.txt", width, height,
                     frames * variant.frame_step)
        _write_info(staging / "seqinfo.ini", name, sequence.fps / variant.frame_step,
                    frames, variant.width(width), height)
        staging.rename(folder)
    return sequence_at(folder)


def _median_background(path: Path) -> np.ndarray:
    """The sequence's median frame, blurred until no shape in it could be taken for a person."""
    with av.open(str(path)) as container:
        frames = [f for f in container.decode(video=0)]
        step = max(1, len(frames) // 25)
        median = np.median(np.stack([f.to_ndarray(format="rgb24") for f in frames[::step]]),
                            axis=0).astype(np.uint8)
        width, height = frames[0].width, frames[0].height
    coarse = av.VideoFrame.from_ndarray(median, format="rgb24").reformat(*_BLUR_SIZE)
    return coarse.reformat(width, height, interpolation="BICUBIC").to_ndarray(format="rgb24")


def _write_video(sequence: Sequence, variant: Variant, target: Path) -> tuple[int, int, int]:
    background = _median_background(sequence.video) if variant.scale != 1 else None
    written = 0
    with av.open(str(sequence.video)) as source, av.open(str(target), "w") as out:
        decoded = source.decode(video=0)
        first = next(decoded)
        width, height = first.width, first.height
        rate = Fraction(sequence.fps).limit_denominator(1001) / variant.frame_step
        stream = out.add_stream("libx264", rate=rate)
        stream.width, stream.height = variant.width(width), height
        stream.pix_fmt, stream.bit_rate = "yuv420p", variant.bitrate or _QUALITY_BITRATE
        last = max(1, _frame_count(sequence.video) - 1)
        for index, frame in enumerate(itertools.chain([first], decoded)):
            if index % variant.frame_step:
                continue
            picture = _transform(frame, variant, background, min(1.0, index / last))
            for packet in stream.encode(av.VideoFrame.from_ndarray(picture, format="rgb24")):
                out.mux(packet)
            written += 1
        for packet in stream.encode():
            out.mux(packet)
    return width, height, written


def _frame_count(path: Path) -> int:
    """Frames in the video, from its packets (no decoding)."""
    with av.open(str(path)) as container:
        return sum(1 for packet in container.demux(video=0) if packet.size)


def _transform(frame: av.VideoFrame, variant: Variant, background: np.ndarray | None,
               at: float) -> np.ndarray:
    width, height = frame.width, frame.height
    if background is not None:
        small = frame.reformat(round(width * variant.scale), round(height * variant.scale),
                               interpolation="AREA").to_ndarray(format="rgb24")
        picture = background.copy()
        left, top = _offset(width, height, variant.scale)
        picture[top:top + small.shape[0], left:left + small.shape[1]] = small
    else:
        picture = frame.to_ndarray(format="rgb24")
    if variant.mirror:
        picture = picture[:, ::-1]
    if variant.brightness != 1:
        picture = (picture * variant.brightness).round().astype(np.uint8)
    if variant.pan:
        left = variant.window(width, at)
        picture = picture[:, left:left + variant.width(width)]
    return np.ascontiguousarray(picture)


def _write_truth(sequence: Sequence, variant: Variant, target: Path, width: int,
                 height: int, frames: int) -> None:
    """gt.txt with every box moved as its frame was, frames renumbered when some are dropped;
    a box wholly outside a pan's window is left out."""
    lines = []
    for line in sequence.gt.read_text().splitlines():
        cells = line.split(",")
        if len(cells) < 7:
            continue
        frame = int(float(cells[0]))
        if (frame - 1) % variant.frame_step:
            continue
        box = variant.box(*(float(c) for c in cells[2:6]), width, height,
                          (frame - 1) / max(1, frames - 1))
        if box[0] >= variant.width(width) or box[0] + box[2] <= 0:
            continue
        new_frame = (frame - 1) // variant.frame_step + 1
        lines.append(",".join([str(new_frame), cells[1], *(f"{v:.2f}" for v in box), *cells[6:]]))
    target.write_text("\n".join(lines) + "\n")


def _write_info(target: Path, name: str, fps: float, frames: int, width: int, height: int) -> None:
    info = configparser.ConfigParser()
    info.optionxform = str  # MOT's keys are camelCase
    info["Sequence"] = {"name": name, "frameRate": f"{fps:g}", "seqLength": str(frames),
                        "imWidth": str(width), "imHeight": str(height)}
    with target.open("w") as f:
        info.write(f, space_around_delimiters=False)
