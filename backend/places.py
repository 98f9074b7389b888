"""A point of the picture in words: the third of its height, then of its width ('bottom
centre'), or 'centre'. Descriptions, typed queries and the graph all name places this way, so
an answer's words and a graph node's name agree."""


def third(cx: float, cy: float) -> str:
    """`cx`, `cy`: the point as fractions of the frame's width and height."""
    horizontal = "left" if cx < 1 / 3 else "right" if cx > 2 / 3 else "centre"
    vertical = "top" if cy < 1 / 3 else "bottom" if cy > 2 / 3 else "middle"
    return "centre" if (horizontal, vertical) == ("centre", "middle") else f"{vertical} {horizontal}"
