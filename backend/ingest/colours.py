"""Colours named as people name them: the nearest basic colour term in CIELAB.

A mean over a box mixes a red coat with the street behind it, and hue thresholds in HSV call a
shaded white shirt black. Here each pixel of the region that belongs to the thing (the torso
between the shoulders and hips, the thighs, the middle of an object's box; skin left out of a
person's) is named by the nearest basic colour term in CIELAB, after Berlin and Kay's eleven
terms plus teal and navy; pixels with little chroma are white, grey or black by lightness alone.
The region's colour is the one most of its pixels are named, so a strip of background at its
edge does not shift it, and none where that name does not clearly lead: a colour is stated
only where it holds. Lightness counts for less than hue in the distance: the same coat in sun
and in shade is one colour.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

# Each term's centre as sRGB: three quarters of the way (in CIELAB) from the Munsell focal
# chip of the term (Berlin and Kay 1969; Sturges and Whitfield 1995) to the median colour of
# the garments a public pedestrian-attribute set (PETA) labels with it, on its tuning half
# (`bench appearance --colour-set`): camera colours are darker and far less saturated than the
# chips (a red top there measures chroma 32, the red chip 67). Teal and navy, which that set
# does not name, keep their chips. No beige: no caption of the 128 COCO images says beige (nor tan or
# cream), and its chip took the pixels of a yellow frisbee, a yellow shirt and a brown bear.
_CENTRE_RGB = {
    "red": (135, 49, 53), "orange": (146, 92, 52),
    "brown": (120, 91, 77), "yellow": (189, 172, 95),
    "green": (73, 100, 73), "teal": (20, 140, 140),
    "blue": (89, 101, 139), "navy": (25, 35, 100), "purple": (109, 73, 118),
    "pink": (181, 135, 146),
}
_CHROMATIC = list(_CENTRE_RGB)
# Under this chroma (C*ab) a colour is white, grey or black: chosen with the centres above on
# both tuning halves (PETA's and the COCO captions') from 12, 15 and 18 (18 before them: cream
# walls and shaded white shirts carry some chroma, but so do a camera's dull green and blue
# clothes).
ACHROMATIC = 12.0
# Pink is a light red: below this L* a red-pink is red. A red car's glossy paint on a dull day
# measures L* 65, chroma 27, nearer the pink centre than the red one; PETA's pink garments
# (median L* 56) lose 5 of the tuning half's 117 right colours to it.
_PINK_FLOOR = 70.0
# Lightness weighs this much against the hue plane: shade changes L far more than a, b.
_L_WEIGHT = 0.5
# L* bounds of black and grey, white above: the three basic achromatic terms, as captions use
# them (a white fridge photographed indoors has L* near 60). Chosen on the tuning half over
# bounds from 55 to 72 and over a fourth term, dark grey.
_GREYS = ((25.0, "black"), (55.0, "grey"))


def lab(rgb: np.ndarray) -> np.ndarray:
    """sRGB 0-255 (..., 3) to CIELAB under D65."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    linear = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
    xyz = linear @ np.array([[0.4124, 0.2126, 0.0193], [0.3576, 0.7152, 0.1192],
                             [0.1805, 0.0722, 0.9505]])
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]),
                     200 * (f[..., 1] - f[..., 2])], axis=-1)


_CENTRES = lab(np.array([_CENTRE_RGB[n] for n in _CHROMATIC]))


# Every name, in alphabetical order: a region's names are counted as their index here.
NAMES = np.array(sorted([*_CHROMATIC, "white", "grey", "black"]), dtype=object)
_CODE = {str(name): k for k, name in enumerate(NAMES)}
_HUES = np.array([_CODE[n] for n in _CHROMATIC])


def _codes(values: np.ndarray) -> np.ndarray:
    """The index in `NAMES` of each CIELAB value's name, of (N, 3)."""
    out = np.empty(len(values), dtype=np.intp)
    chroma = np.hypot(values[:, 1], values[:, 2])
    grey = chroma < ACHROMATIC
    light = values[:, 0]
    out[grey] = _CODE["white"]
    for bound, name in reversed(_GREYS):
        out[grey & (light < bound)] = _CODE[name]
    d = values[~grey, None, :] - _CENTRES[None, :, :]
    d[..., 0] *= _L_WEIGHT
    chromatic = _HUES[np.argmin((d ** 2).sum(-1), axis=1)]
    chromatic[(chromatic == _CODE["pink"]) & (light[~grey] < _PINK_FLOOR)] = _CODE["red"]
    out[~grey] = chromatic
    return out


def names(pixels: np.ndarray) -> np.ndarray:
    """The colour name of each RGB pixel of (N, 3)."""
    return NAMES[_codes(lab(np.asarray(pixels).reshape(-1, 3)))]


def colour_name(rgb: np.ndarray) -> str:
    return str(names(np.asarray(rgb, dtype=np.float64)[None])[0])


# A region states a colour only where its commonest name has at least this many times the
# pixels of the next name of another hue; white, grey and black next to each other are one
# surface in light and shade, not rivals (a white sheep's shaded side is grey). Chosen on the
# tuning half of `bench appearance` from 1.5, 2, 2.5 and 3, over the commonest name's share of
# the region (0.4 to 0.75) and over counting every other name as a rival (tuning half 12 of 15
# right, 11 of 23 before).
_LEAD = 2.0
_SHADES = {frozenset(("white", "grey")), frozenset(("grey", "black"))}
# No least number of pixels: 1,000 gained one item on the tuning half (edge-on skis) but left
# the people of 640x480 footage (TUD-Campus) without colours; 100 to 300 changed nothing.


def _leader(tally: np.ndarray, lead: float) -> int | None:
    """The commonest name's code where it leads every name of another hue by `lead`, else None.
    Names are counted in alphabetical order, so that a tie goes to the same name every time."""
    values = np.flatnonzero(tally)
    counts = tally[values]
    order = np.argsort(counts)[::-1]
    top = values[order[0]]
    rivals = [counts[k] for k in order[1:]
              if frozenset((NAMES[top], NAMES[values[k]])) not in _SHADES]
    return None if rivals and counts[order[0]] < lead * rivals[0] else int(top)


@dataclass(frozen=True)
class Reading:
    """A region's colour: `rgb`, the median of the pixels named the leading colour (None where
    no name clearly leads), and `shares`, each name's share of the pixels, in `NAMES` order (a
    question's options may name the colour that came second)."""
    rgb: np.ndarray | None
    shares: np.ndarray


def read(pixels: np.ndarray, gains: np.ndarray | None = None, lead: float = _LEAD,
         values: np.ndarray | None = None) -> Reading | None:
    """The pixels' colour after the light's `gains` (`white_patch`), None for no pixels; the
    leading name must lead the next of another hue `lead` times. `values`: the pixels'
    CIELAB, where the caller has it already (no `gains` then)."""
    pixels = np.asarray(pixels, dtype=np.float64).reshape(-1, 3)
    if gains is not None:
        pixels = np.clip(pixels * gains, 0, 255)
    if len(pixels) == 0:
        return None
    codes = _codes(lab(pixels) if values is None else values)
    tally = np.bincount(codes, minlength=len(NAMES))
    top = _leader(tally, lead)
    return Reading(None if top is None else np.median(pixels[codes == top], axis=0),
                   tally / tally.sum())


def dominant(pixels: np.ndarray, gains: np.ndarray | None = None, lead: float = _LEAD
             ) -> np.ndarray | None:
    """The median RGB of the pixels named the leading colour (`read`), None where none leads."""
    reading = read(pixels, gains, lead)
    return None if reading is None else reading.rgb


def white_patch(frame: np.ndarray) -> np.ndarray:
    """Per-channel gains that make the frame's brightest pixels white (99th percentile), at
    most threefold: a white fridge under kitchen light reads grey without them. Chosen over
    none and grey world on the tuning half of `bench appearance`."""
    top = np.percentile(frame[::4, ::4].reshape(-1, 3), 99, axis=0) + 1.0
    return np.minimum(255.0 / top, 3.0)


def grey_world(frame: np.ndarray) -> np.ndarray:
    """Per-channel gains that make the frame's mean grey (a coarse light correction)."""
    means = frame[::8, ::8].reshape(-1, 3).mean(axis=0) + 1.0
    return means.mean() / means


# Pose keypoints (COCO order) and the confidence that counts as seen.
_SHOULDERS, _HIPS, _KNEES = (5, 6), (11, 12), (13, 14)
_SEEN = 0.5
# The torso quadrilateral shrunk towards its middle, so arms and background at its sides stay out.
_SHRINK = 0.25


def _region(frame: np.ndarray, polygons: list[np.ndarray]) -> np.ndarray:
    """The frame's pixels inside the polygons (each (k, 2) in pixels)."""
    h, w = frame.shape[:2]
    allxy = np.concatenate(polygons)
    x1, y1 = np.clip(np.floor(allxy.min(axis=0)).astype(int), 0, [w, h])
    x2, y2 = np.clip(np.ceil(allxy.max(axis=0)).astype(int) + 1, 0, [w, h])
    if x2 - x1 < 2 or y2 - y1 < 2:
        return np.zeros((0, 3))
    mask = Image.new("1", (int(x2 - x1), int(y2 - y1)))
    draw = ImageDraw.Draw(mask)
    for poly in polygons:
        draw.polygon([(float(x - x1), float(y - y1)) for x, y in poly], fill=1)
    return frame[y1:y2, x1:x2][np.asarray(mask, dtype=bool)]


def _shrunk(points: np.ndarray) -> np.ndarray:
    centre = points.mean(axis=0)
    return centre + (points - centre) * (1 - _SHRINK)


def _limb(a: np.ndarray, b: np.ndarray, half_width: float) -> np.ndarray:
    """A band along the segment a-b, `half_width` either side, trimmed at both ends."""
    a, b = a + (b - a) * 0.1, b - (b - a) * 0.1
    along = b - a
    normal = np.array([-along[1], along[0]]) / max(float(np.hypot(*along)), 1e-6) * half_width
    return np.array([a + normal, b + normal, b - normal, a - normal])


def _chest(kp: np.ndarray) -> np.ndarray:
    """Below the shoulders, as deep as they are wide: the torso of someone seen to the chest."""
    left, right = kp[_SHOULDERS[0], :2], kp[_SHOULDERS[1], :2]
    drop = np.array([0.0, float(np.hypot(*(left - right)))])
    return np.array([left, right, right + drop, left + drop])


def body_regions(frame: np.ndarray, keypoints: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(upper, lower) pixels of a person: the shoulders-to-hips quadrilateral (the chest where
    the hips are out of view), and bands along the thighs; None when the shoulders are not
    both seen."""
    kp = np.asarray(keypoints, dtype=np.float64)
    if kp.shape != (17, 3) or (kp[list(_SHOULDERS), 2] < _SEEN).any():
        return None
    if (kp[list(_HIPS), 2] < _SEEN).any():
        return _region(frame, [_shrunk(_chest(kp))]), np.zeros((0, 3))
    torso = kp[[_SHOULDERS[0], _SHOULDERS[1], _HIPS[1], _HIPS[0]], :2]
    upper = _region(frame, [_shrunk(torso)])
    hip_width = float(np.hypot(*(kp[_HIPS[0], :2] - kp[_HIPS[1], :2])))
    thighs = [_limb(kp[hip, :2], kp[knee, :2], max(hip_width * 0.2, 1.0))
              for hip, knee in zip(_HIPS, _KNEES) if kp[knee, 2] >= _SEEN]
    lower = _region(frame, thighs) if thighs else np.zeros((0, 3))
    return upper, lower


def _box_pixels(frame: np.ndarray, box, top: float, bottom: float) -> np.ndarray:
    """The middle half of the box's width between fractions `top` and `bottom` of its height."""
    h, w = frame.shape[:2]
    x1, y1, x2, y2 = box
    bw, bh = x2 - x1, y2 - y1
    xa, xb = int(max(0, x1 + bw / 4)), int(min(w, x2 - bw / 4))
    ya, yb = int(max(0, y1 + bh * top)), int(min(h, y1 + bh * bottom))
    return frame[ya:yb, xa:xb].reshape(-1, 3)


# Skin in CIELAB: hues between red and yellow (20-75 degrees), moderate chroma, neither very
# dark nor very light, whatever the complexion (a common band in skin detection). Faces, necks
# and arms in the torso region and bare legs are no garment's colour: a woman in a white shirt
# read brown from her face and hair before.
_SKIN_HUE, _SKIN_CHROMA, _SKIN_L = (20.0, 75.0), (10.0, 45.0), (25.0, 90.0)


def _without_skin(pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pixels that are not skin-coloured, and their CIELAB; all of them where most are (a
    tan coat is the garment, not skin)."""
    values = lab(pixels)
    if len(pixels) == 0:
        return pixels, values
    hue = np.degrees(np.arctan2(values[:, 2], values[:, 1]))
    chroma = np.hypot(values[:, 1], values[:, 2])
    skin = ((hue > _SKIN_HUE[0]) & (hue < _SKIN_HUE[1]) & (chroma > _SKIN_CHROMA[0])
            & (chroma < _SKIN_CHROMA[1]) & (values[:, 0] > _SKIN_L[0])
            & (values[:, 0] < _SKIN_L[1]))
    return (pixels, values) if skin.mean() > 0.5 else (pixels[~skin], values[~skin])


def person_colours(frame: np.ndarray, box, keypoints=None, gains=None
                   ) -> tuple[Reading | None, Reading | None]:
    """(upper, lower) colours of a person's clothes: by body part where the pose was read
    (lower None when the hips are out of view), else the box's upper and lower middle; skin
    left out."""
    parts = body_regions(frame, keypoints) if keypoints is not None else None
    if parts is None:
        parts = _box_pixels(frame, box, 0.15, 0.5), _box_pixels(frame, box, 0.5, 0.85)
    garments = (_without_skin(_lit(part, gains)) for part in parts)
    return tuple(read(pixels, values=values) for pixels, values in garments)


def object_colour(frame: np.ndarray, box, gains=None) -> Reading | None:
    """An object's colour from the middle of its box, where the object is rather than around
    it."""
    return read(_box_pixels(frame, box, 0.25, 0.75), gains)


def _lit(pixels: np.ndarray, gains) -> np.ndarray:
    """The pixels after the light's `gains`: skin is told by its colour under white light."""
    pixels = np.asarray(pixels, dtype=np.float64).reshape(-1, 3)
    return pixels if gains is None else np.clip(pixels * gains, 0, 255)
