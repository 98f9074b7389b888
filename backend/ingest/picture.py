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
# Mean grey-level step between neighbouring pixels of a bar, at most: black bars measure 0 and
# blurred ones 2-3, while the still parts of real scenes measured 1.6-33 (plain walls are flat).
_FLAT = 4.0


class PictureSpan:
    """Fed every sampled frame; `span` gives the picture's left and right edge in pixels."""

    def __init__(self) -> None:
        self._low: np.ndarray | None = None
        self._high: np.ndarray | None = None
        self._width = 0
        self._last: np.ndarray | None = None

    def add(self, frame: np.ndarray) -> None:
        height, width = frame.shape[:2]
        rows = max(1, round(_COLUMNS * height / width))
        grey = np.asarray(Image.fromarray(frame).convert("L").resize(
            (_COLUMNS, rows), Image.Resampling.BOX), dtype=np.float32)
        self._last = grey
        if self._low is None or self._low.shape != grey.shape:
            self._low, self._high, self._width = grey.copy(), grey.copy(), width
            return
        np.minimum(self._low, grey, out=self._low)
        np.maximum(self._high, grey, out=self._high)

    def span(self) -> tuple[float, float]:
        """(left, right) of the columns that changed; the whole width unless still, flat bars
        of about equal width flank them. A still part of a fixed camera's view is picture: it
        lies at one side only, or it has texture (a flat wall on both sides is the risk left)."""
        whole = 0.0, float(self._width)
        if self._low is None or self._last is None:
            return whole
        live = np.flatnonzero(((self._high - self._low) > _STILL_RANGE).any(axis=0))
        if live.size == 0:
            return whole
        first, last = int(live[0]), int(live[-1]) + 1
        scale = self._width / _COLUMNS
        if abs(first - (_COLUMNS - last)) * scale > _CENTRED * self._width:
            return whole
        bars = [self._last[:, :first], self._last[:, last:]]
        if not all(bar.shape[1] and _steps(bar) <= _FLAT for bar in bars):
            return whole
        # A picture's edge inside a column makes that column live: its inner side is the edge
        # to within a column, where the outer side would leave a sliver there uncut.
        return float((first + 1) * scale), float((last - 1) * scale)


def _steps(grey: np.ndarray) -> float:
    """Mean grey-level step between neighbouring pixels: how much detail an area has."""
    across = np.abs(np.diff(grey, axis=1)).mean() if grey.shape[1] > 1 else 0.0
    down = np.abs(np.diff(grey, axis=0)).mean() if grey.shape[0] > 1 else 0.0
    return float(across + down)
