"""A browser-playable copy of a video, for the app's player.

Browsers play H.264, VP8/VP9 and AV1; many uploads (MPEG-4 Part 2 AVIs, old camera files) are
none of these. Those get a small H.264 preview; the source itself stays as it was.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av

from backend.ingest import decode

_PLAYABLE_CODECS = {"h264", "vp8", "vp9", "av1"}
_PLAYABLE_CONTAINERS = {".mp4", ".m4v", ".webm", ".mov"}
_MAX_HEIGHT = 480


def needs_preview(source: Path, meta: decode.VideoMeta) -> bool:
    return meta.codec not in _PLAYABLE_CODECS or source.suffix.lower() not in _PLAYABLE_CONTAINERS


def write_preview(source: Path, meta: decode.VideoMeta, target: Path) -> None:
    """Transcode the video stream to H.264 (no audio), at most 480 lines high."""
    scale = min(1.0, _MAX_HEIGHT / meta.height)
    width, height = (int(round(meta.width * scale / 2)) * 2, int(round(meta.height * scale / 2)) * 2)
    rate = Fraction(meta.fps).limit_denominator(1001)
    with av.open(str(source)) as src, av.open(str(target), "w") as dst:
        stream = dst.add_stream("libx264", rate=rate)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.time_base = 1 / rate
        stream.options = {"preset": "veryfast", "crf": "26", "movflags": "+faststart"}
        for index, frame in enumerate(src.decode(video=0)):
            frame = frame.reformat(width=width, height=height, format="yuv420p")
            # Number frames afresh: source timestamps (AVI, damaged files) can be missing or odd.
            frame.pts, frame.time_base = index, 1 / rate
            for packet in stream.encode(frame):
                dst.mux(packet)
        for packet in stream.encode():
            dst.mux(packet)
