"""Scene and shot evidence per fine segment, from what models/scenes.py measured per frame.

Per-frame measurements are noisy (a car crossing a flat road can pull the camera fit along with
it for a frame), so each fine segment takes the median of its frames and names it in words a
question uses: where the shots change, whether the camera is static, pans, tilts or zooms, how
much else moves, how bright the picture is and which colours fill it. The rows go to the
`shots` and `scenes` tables; the sentences go into the timeline and the episodic memory.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from backend.ingest.colours import colour_name
from models.types import FrameLook

CAMERA_STILL = 0.02   # picture motion per second (share of the frame) below which the camera is static
_MIN_ESTIMATES = 3    # frames with a camera estimate a segment needs before it says anything
_MOTION_LEVELS = ((0.005, "still"), (0.08, "some"), (math.inf, "much"))  # share of the picture moving
_BRIGHTNESS = ((60.0, "dark"), (100.0, "dim"), (math.inf, "bright"))     # mean grey level 0-255
_MIN_COLOUR_SHARE = 0.1  # colours covering less of the picture are not named
_CAMERA_WORDS = {"static": "static camera", "pan left": "the camera pans left",
                 "pan right": "the camera pans right", "tilt up": "the camera tilts up",
                 "tilt down": "the camera tilts down", "zoom in": "the camera zooms in",
                 "zoom out": "the camera zooms out"}
_MOTION_WORDS = {"still": "nothing else moves", "some": "some movement", "much": "much movement"}


@dataclass(frozen=True)
class Shot:
    """A continuous take, with its whole-picture facts (backend/ingest/picture_facts.py)."""

    id: int
    t_start: float
    t_end: float
    colour: str | None = None
    footage: str | None = None
    light: str | None = None
    place: str | None = None


@dataclass(frozen=True)
class Scene:
    """One fine segment's picture. shot_id: the shot the segment starts in; cut_at: the first
    cut inside it, if any. camera: static, pan left/right, tilt up/down, zoom in/out or unknown;
    camera_speed: its rate (share of the frame per second); motion: still/some/much from
    moving_share, the share of the picture that moves apart from the camera; brightness:
    dark/dim/bright from luma; colours: e.g. 'green 60%, white 25%'."""

    t_start: float
    t_end: float
    shot_id: int
    cut_at: float | None
    camera: str
    camera_speed: float
    motion: str
    moving_share: float
    brightness: str
    luma: float
    colours: str

    def row(self, scene_id: int) -> dict:
        return {"id": scene_id, **asdict(self)}


def shots(cuts: list[float], duration: float) -> list[Shot]:
    """The shots between cuts; a video without a cut is one shot."""
    edges = [0.0, *sorted(c for c in cuts if 0.0 < c < duration), duration]
    return [Shot(i, round(a, 3), round(b, 3)) for i, (a, b) in enumerate(zip(edges, edges[1:]), start=1)]


def segment_scenes(looks: list[FrameLook], cuts: list[float], shot_list: list[Shot],
                   steps: list[tuple[float, float]], progress: Callable[[int, int], None]) -> list[Scene]:
    """The scene of every step [t0, t1), from the frames sampled in it (looks in time order)."""
    times = [look.t for look in looks]
    found = []
    for k, (t0, t1) in enumerate(steps):
        start, end = bisect_left(times, t0), bisect_left(times, t1)
        # A last step shorter than the sampling interval holds no frame: the one before shows it.
        inside = looks[start:end] or looks[max(0, start - 1):start]
        found.append(segment_scene(inside, cuts, shot_list, t0, t1))
        progress(k + 1, len(steps))
    return found


def segment_scene(inside: list[FrameLook], cuts: list[float], shot_list: list[Shot],
                  t0: float, t1: float) -> Scene:
    """The scene of the segment [t0, t1) from the frames sampled inside it."""
    # A frame just after a cut was compared with the other shot: its motion means nothing.
    steady = [look for look in inside if not any(abs(look.t - c) < 1e-3 for c in cuts)]
    camera, speed = camera_motion(steady)
    moving = [look.changed for look in steady if look.changed is not None]
    moving_share = float(np.median(moving)) if moving else 0.0
    luma = float(np.mean([look.luma for look in inside])) if inside else 0.0
    cut_at = next((c for c in sorted(cuts) if t0 <= c < t1 and c > 0), None)
    return Scene(t_start=round(t0, 3), t_end=round(t1, 3), shot_id=shot_at(shot_list, t0),
                 cut_at=cut_at, camera=camera, camera_speed=round(speed, 4),
                 motion=_level(moving_share, _MOTION_LEVELS), moving_share=round(moving_share, 4),
                 brightness=_level(luma, _BRIGHTNESS), luma=round(luma, 1),
                 colours=colour_shares(inside))


def shot_at(shot_list: list[Shot], t: float) -> int:
    return next((s.id for s in shot_list if s.t_start <= t < s.t_end), shot_list[-1].id)


def picture_shift(looks: list[FrameLook]) -> Callable[[float], float]:
    """How far the whole picture has moved sideways by time t (share of the width, right +),
    from the frames' pan where the camera moved; a tracked object's own way across the scene
    is its image path less this. A frame whose pan could not be told takes its neighbours'
    (a steady pan measured on most frames); rates under CAMERA_STILL are a still camera's
    noise."""
    times = [look.t for look in looks]
    known = [(look.t, look.pan) for look in looks if look.pan is not None]
    if not known:
        return lambda t: 0.0
    rates = np.interp(times, [t for t, _ in known], [p for _, p in known])
    rates[np.abs(rates) < CAMERA_STILL] = 0.0
    total = np.concatenate([[0.0], np.cumsum(np.diff(times) * rates[1:])])
    return lambda t: float(np.interp(t, times, total))


def camera_motion(looks: list[FrameLook]) -> tuple[str, float]:
    """The camera's motion over these frames as a word and a rate: the median of the frames'
    estimates, so one frame fooled by a passing object does not decide it."""
    estimated = [look for look in looks if look.pan is not None]
    if len(estimated) < min(_MIN_ESTIMATES, len(looks)) or not estimated:
        return "unknown", 0.0
    pan = float(np.median([look.pan for look in estimated]))
    tilt = float(np.median([look.tilt for look in estimated]))
    # A zoom moves the frame's edges by half its change of scale: compare like with like.
    zoom = float(np.median([look.zoom for look in estimated])) / 2
    rates = {"pan": pan, "tilt": tilt, "zoom": zoom}
    kind = max(rates, key=lambda k: abs(rates[k]))
    rate = rates[kind]
    if abs(rate) < CAMERA_STILL:
        return "static", abs(rate)
    # The picture moving right means the camera turns left; moving down, it tilts up.
    word = {"pan": "pan left" if rate > 0 else "pan right",
            "tilt": "tilt up" if rate > 0 else "tilt down",
            "zoom": "zoom in" if rate > 0 else "zoom out"}[kind]
    return word, abs(rate)


def colour_shares(looks: list[FrameLook]) -> str:
    """Named colours covering at least a tenth of the picture, with their shares, largest first."""
    totals: dict[str, float] = defaultdict(float)
    for look in looks:
        for rgb, share in look.colours:
            totals[colour_name(np.array(rgb))] += share / len(looks)
    named = sorted(((share, name) for name, share in totals.items() if share >= _MIN_COLOUR_SHARE),
                   reverse=True)
    return ", ".join(f"{name} {share:.0%}" for share, name in named)


def _level(value: float, levels: tuple[tuple[float, str], ...]) -> str:
    return next(word for limit, word in levels if value < limit)


def colour_names(colours: str) -> list[str]:
    """'green 60%, white 25%' -> ['green', 'white']."""
    return [part.rsplit(" ", 1)[0] for part in colours.split(", ") if part]


def picture(scene: Scene) -> str:
    """The segment's picture in a sentence, without figures, so that steps showing the same
    picture read the same and merge: 'Cut to a new shot at 3.0 s. Picture: static camera, some
    movement, bright, mostly grey and green.'"""
    parts = [] if scene.camera == "unknown" else [_CAMERA_WORDS[scene.camera]]
    parts += [_MOTION_WORDS[scene.motion], scene.brightness]
    if colours := colour_names(scene.colours):
        parts.append("mostly " + " and ".join(colours))
    sentence = "Picture: " + ", ".join(parts) + "."
    if scene.cut_at is not None:
        sentence = f"Cut to a new shot at {scene.cut_at:.1f} s. " + sentence
    return sentence


def pictures_over(scenes: list[Scene], shot_list: list[Shot], t0: float, t1: float) -> str:
    """A longer window's picture: its cuts, the camera motions seen, the commonest colours."""
    inside = [s for s in scenes if s.t_start < t1 and s.t_end > t0]
    if not inside:
        return ""
    cuts = [s.t_start for s in shot_list if t0 < s.t_start < t1]
    shots_said = (f"{len(cuts)} cut{'s' if len(cuts) != 1 else ''} (at "
                  + ", ".join(f"{c:.1f} s" for c in cuts) + ")") if cuts else "one shot"
    cameras = Counter(s.camera for s in inside if s.camera != "unknown")
    camera = "; camera " + ", ".join(c for c, _ in cameras.most_common(3)) if cameras else ""
    colours = Counter(name for s in inside for name in colour_names(s.colours)[:2])
    mostly = "; mostly " + " and ".join(c for c, _ in colours.most_common(2)) if colours else ""
    return f"Picture: {shots_said}{camera}{mostly}."
