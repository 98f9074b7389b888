"""Where the picture is: the columns that ever change, without still bars at the sides.

Pillarboxed uploads (black bars, or the blurred copy of the picture that phone editors put
beside a narrow video) show the picture inside a larger frame. Someone cut by the picture's
edge is cut there, not at the frame's, so `tracks.drop_cut_off` needs the picture's edges.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

_COLUMNS = 160       # coarse enough to be cheap, fine enough for a 1 % margin at 640 px
_STILL_RANGE = 24.0  # grey levels a still bar's pixels stay within (compression noise included)
_CENTRED = 0.05      # bars differ in width by at most this share of the frame: a pillarbox


class PictureSpan:
    """Fed every sampled frame; `span` gives the picture's left and right edge in pixels."""

    def __init__(self) -> None:
        self._low: np.ndarray | None = None
        self._high: np.ndarray | None = None
        self._width = 0

    def add(self, frame: np.ndarray) -> None:
        height, width = frame.shape[:2]
        rows = max(1, round(_COLUMNS * height / width))
        grey = np.asarray(Image.fromarray(frame).convert("L").resize(
            (_COLUMNS, rows), Image.Resampling.BOX), dtype=np.float32)
        if self._low is None or self._low.shape != grey.shape:
            self._low, self._high, self._width = grey.copy(), grey.copy(), width
            return
        np.minimum(self._low, grey, out=self._low)
        np.maximum(self._high, grey, out=self._high)

    def span(self) -> tuple[float, float]:
        """(left, right) of the columns that changed; the whole width unless still bars of
        about equal width flank them (a still wall at one side of a fixed camera's view is
        picture, and so is everything when nothing moved)."""
        if self._low is None:
            return 0.0, float(self._width)
        live = np.flatnonzero(((self._high - self._low) > _STILL_RANGE).any(axis=0))
        scale = self._width / _COLUMNS
        if live.size == 0:
            return 0.0, float(self._width)
        left, right = live[0] * scale, (live[-1] + 1) * scale
        if abs(left - (self._width - right)) > _CENTRED * self._width:
            return 0.0, float(self._width)
        return float(left), float(right)
