"""A point of the picture in words: the third of its height, then of its width ('bottom
centre'), or 'centre'. Descriptions, typed queries and the graph all name places this way, so
an answer's words and a graph node's name agree; how far from the camera a box is, from its
size; and where one thing is relative to another ('left of', 'in front of', 'on'), from their
two boxes."""

import re


def third(cx: float, cy: float) -> str:
    """`cx`, `cy`: the point as fractions of the frame's width and height."""
    horizontal = "left" if cx < 1 / 3 else "right" if cx > 2 / 3 else "centre"
    vertical = "top" if cy < 1 / 3 else "bottom" if cy > 2 / 3 else "middle"
    return "centre" if (horizontal, vertical) == ("centre", "middle") else f"{vertical} {horizontal}"


# A box this large (its height's share of the frame's, or its width's, whichever is more: a
# car near the camera is wide, a person tall) is near the camera; one no larger than this, far.
NEAR, FAR = 0.5, 0.15
DISTANCES = ("near", "midway", "far")


def distance(h: float, w: float = 0.0) -> str:
    """'near', 'midway' or 'far' from the camera, from a box's height and width as fractions
    of the frame's."""
    size = max(h, w)
    return "near" if size >= NEAR else "far" if size <= FAR else "midway"


# ---- where one thing is relative to another ------------------------------------------------

RELATIONS = ("left of", "right of", "in front of", "behind", "next to", "on", "above", "below")
# Across: centres more than this share of the two boxes' mean width apart. Depth, for things
# standing on one ground: the lower box bottom (feet, wheels) is nearer the camera, by more than
# this share of their mean height. Next to: side by side with level bottoms, a gap under this
# share of their mean width.
ACROSS, DEPTH, NEXT = 0.5, 0.1, 0.5


def relations(a, b) -> set[str]:
    """What holds of box `a` relative to box `b` (x1, y1, x2, y2 in pixels, y down), as someone
    looking at the picture says it. 'On': `a` is the smaller, its bottom inside the upper half
    of `b` and its centre over it (a cat on a sofa, a rider on a horse); depth is then not
    read, as the two do not stand on one ground."""
    ax1, ay1, ax2, ay2 = a
    bx1, by1, bx2, by2 = b
    width, height = (ax2 - ax1 + bx2 - bx1) / 2, (ay2 - ay1 + by2 - by1) / 2
    across = (ax1 + ax2 - bx1 - bx2) / 2
    held = set()
    if abs(across) > ACROSS * width:
        held.add("left of" if across < 0 else "right of")
    if bx1 <= (ax1 + ax2) / 2 <= bx2 and by1 <= ay2 <= (by1 + by2) / 2 and \
            (ax2 - ax1) * (ay2 - ay1) < (bx2 - bx1) * (by2 - by1):
        held.add("on")
    elif abs(ay2 - by2) > DEPTH * height:
        held.add("in front of" if ay2 > by2 else "behind")
    elif held and max(ax1, bx1) - min(ax2, bx2) < NEXT * width:
        held.add("next to")
    if ay2 <= by1:
        held.add("above")
    elif ay1 >= by2:
        held.add("below")
    return held


# How questions and options say each relation; 'on' not of a side ('on the left of' is left).
_SAID = {
    "left of": r"\b(?:to|on|at) the left(?:[- ]hand)?(?: side)? of\b|\bleft of\b",
    "right of": r"\b(?:to|on|at) the right(?:[- ]hand)?(?: side)? of\b|\bright of\b",
    "in front of": r"\bin front of\b|\b(?:nearer|closer) (?:to )?(?:the camera|us|the viewer) "
                   r"than\b",
    "behind": r"\bbehind\b|\bin back of\b|\b(?:farther|further) (?:from|away from) "
              r"(?:the camera|us|the viewer) than\b",
    "next to": r"\bnext to\b|\bbeside\b|\balongside\b",
    "on": r"\bon top of\b|\bon (?:the |a |an )(?!(?:left|right|screen|camera|video|picture|"
          r"frame|image|ground|floor|way|road|street)\b)",
    "above": r"\babove\b",
    "below": r"\bbelow\b|\bunder(?:neath)?\b|\bbeneath\b",
}


def relation_said(text: str) -> tuple[str, int, int] | None:
    """The first relation a text says, with where the words for it start and end."""
    found = [(m.start(), m.end(), name) for name, pattern in _SAID.items()
             for m in [re.search(pattern, text, re.I)] if m]
    if not found:
        return None
    start, end, name = min(found)
    return name, start, end
