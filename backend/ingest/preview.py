"""A browser-playable copy of a video, for the app's player.

Browsers play H.264, VP8/VP9 and AV1 in MP4 or WebM; many uploads (MPEG-4 Part 2 AVIs, old
camera files, raw streams saved as .mp4) are none of these. Those get a small H.264 preview, upright
as ingest saw the frames, and evenly timed where the source's frames are not (ingest numbers
frame i at i / fps, and the player must show that frame then); the source itself stays as it was.
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
    return (not meta.steady or meta.codec not in _PLAYABLE_CODECS or source.suffix.lower() not in _PLAYABLE_CONTAINERS
            or not decode.in_browser_container(source))


def write_preview(source: Path, meta: decode.VideoMeta, target: Path) -> None:
    """Transcode the video stream to H.264 (no audio), at most 480 lines high."""
    scale = min(1.0, _MAX_HEIGHT / meta.height)
    width, height = (int(round(meta.width * scale / 2)) * 2, int(round(meta.height * scale / 2)) * 2)
    rate = Fraction(meta.fps).limit_denominator(1001)
    with av.open(str(target), "w") as dst:
        stream = dst.add_stream("libx264", rate=rate)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.time_base = 1 / rate
        stream.options = {"preset": "veryfast", "crf": "26", "movflags": "+faststart"}
        for index, _, rgb in decode.iter_frames(source, meta, range(meta.frames)):
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(
                width=width, height=height, format="yuv420p")
            # Number frames as ingest did: source timestamps (AVI, raw streams) can be missing or odd.
            frame.pts, frame.time_base = index, 1 / rate
            for packet in stream.encode(frame):
                dst.mux(packet)
        for packet in stream.encode():
            dst.mux(packet)
