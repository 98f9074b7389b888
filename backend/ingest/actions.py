"""What tracked people do, over time: actions read from body keypoints and the objects at hand.

DoraemonGPT keeps an action for every tracked instance (from a video model); offline we have a
pose model and an object detector, so actions are rules over what those measured, each one
stated in docs/PERCEPTION.md ("Actions") and its precision measured by `bench actions`:

- the body alone: standing, sitting, bending, lying (the pose model's posture); walking and
  running (how fast the foot point moves, in body heights a second, the camera's own motion
  taken out); jumping (feet and hips rise together and come down); falling (upright, then lying
  within two seconds); turning round (facing the camera, then the back, or the reverse); raising
  arms and waving (a wrist above the shoulder, moving sideways); punching (a wrist thrown out to
  an extended arm at shoulder height); climbing (rising steadily without getting smaller);
  dancing (limbs moving fast around a body that stays put); touching the face (a hand at the face
  for a second: make-up, shaving, wiping, a chin on a hand);
- with objects: holding (a wrist on the object's box), carrying (holding while walking), riding
  (hips over a bicycle, motorbike, horse or skateboard, seated or feet off the ground), drinking
  and eating (a held cup or food raised to the face), using a phone, swinging (a bat or racket
  held with the arms up or moving fast), throwing (a ball leaves the hand);
- between people: facing each other, hands joined, hugging, fighting (close, one striking),
  passing a ball.

A rule whose keypoints were not seen says nothing: a person cut off at the waist is neither
walking nor standing. Each action becomes intervals (runs of frames where its rule held, short
gaps bridged), scored by the share of frames in the run that support it, with the evidence in
words for the *Evidence and cost* panel.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from backend.ingest.tracks import Frame
from models import pose as kp_index
from models.motion import CATEGORY as MOVING
from models.types import Detection, FrameLook

# What a video's `models` says read its actions.
RULES = "rules over pose keypoints and object boxes (backend/ingest/actions.py)"
# Every action the rules can state, in the words the table stores, by family.
BODY = ("standing", "walking", "running", "sitting", "lying", "bending", "jumping", "falling",
        "turning round", "raising arms", "waving", "punching", "climbing", "dancing",
        "touching the face")
WITH_OBJECTS = ("holding", "carrying", "riding", "drinking", "eating", "using a phone",
                "swinging", "throwing")
BETWEEN_PEOPLE = ("facing each other", "hands joined", "hugging", "fighting", "passing a ball")
ACTIONS = BODY + WITH_OBJECTS + BETWEEN_PEOPLE

# Events last a moment: one supporting frame is an interval. States need two (or the whole
# track, for a still image).
EVENTS = {"jumping", "falling", "turning round", "punching", "throwing", "passing a ball"}

HANDHELD = {"bottle", "cup", "wine glass", "fork", "knife", "spoon", "bowl", "banana", "apple",
            "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza", "donut", "cake",
            "cell phone", "remote", "book", "scissors", "teddy bear", "hair drier", "toothbrush",
            "umbrella", "handbag", "suitcase", "frisbee", "sports ball", "baseball bat",
            "baseball glove", "tennis racket", "kite", "mouse", "laptop", "skateboard",
            "surfboard", "skis", "snowboard"}
RIDDEN = {"bicycle", "motorcycle", "horse", "skateboard", "elephant"}
DRINKS = {"bottle", "cup", "wine glass"}
FOOD = {"banana", "apple", "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza",
        "donut", "cake", "fork", "spoon"}
SWUNG = {"baseball bat", "tennis racket"}
THROWN = {"sports ball", "frisbee"}

SEEN = kp_index.SEEN
WALK, RUN = 0.25, 1.4       # foot point speed, body heights a second (1.4 m/s walking ~0.8)
JUMP = 0.2                  # ankles and hips above their lowest nearby place, body heights
FALL_SECONDS = 2.0
TURN_SECONDS = 2.0
BRIDGE = 1.0                # seconds of no support bridged inside one interval
HOLD_REACH = 0.15           # a wrist this far outside an object's box (torso lengths) holds it
FACE_REACH = 0.8            # an object this near the nose (torso lengths) is at the face
FACE_HAND = 1.3             # a wrist this near the nose (head widths) is at the face: a
                            # hand at the ear holding a phone has its wrist by the jaw


@dataclass(frozen=True)
class Action:
    instance_id: int
    action: str
    t_start: float
    t_end: float
    score: float
    evidence: str
    other_id: int | None = None   # the instance acted on or with: the held cup, the other person

    def span(self) -> str:
        return f"{self.t_start:.1f} – {self.t_end:.1f} s"

    def row(self, i: int) -> dict:
        return {"id": i, "instance_id": self.instance_id, "action": self.action,
                "t_start": round(self.t_start, 3), "t_end": round(self.t_end, 3),
                "score": round(self.score, 3), "evidence": self.evidence,
                "other_id": self.other_id}


@dataclass
class _Seen:
    """A person on one sampled frame, with what the rules need."""

    t: float
    frame: int
    box: tuple[float, float, float, float]
    kp: np.ndarray | None
    posture: str | None
    facing: str | None
    arm_raised: bool | None
    interpolated: bool

    @property
    def height(self) -> float:
        return max(self.box[3] - self.box[1], 1.0)

    @property
    def foot(self) -> tuple[float, float]:
        return (self.box[0] + self.box[2]) / 2, self.box[3]

    def joint(self, j: int) -> np.ndarray | None:
        return self.kp[j, :2] if self.kp is not None and self.kp[j, 2] >= SEEN else None

    def mid(self, a: int, b: int) -> np.ndarray | None:
        pa, pb = self.joint(a), self.joint(b)
        if pa is None or pb is None:
            return pa if pb is None else pb
        return (pa + pb) / 2

    @cached_property
    def torso(self) -> float:
        """Shoulders to hips in pixels; a third of the box height where they are not seen."""
        s = self.mid(kp_index.L_SHOULDER, kp_index.R_SHOULDER)
        h = self.mid(kp_index.L_HIP, kp_index.R_HIP)
        if s is not None and h is not None and np.linalg.norm(s - h) >= 1:
            return _dist(s, h)
        return self.height / 3

    def wrists(self) -> list[np.ndarray]:
        return [w for w in (self.joint(kp_index.L_WRIST), self.joint(kp_index.R_WRIST))
                if w is not None]

    def head(self) -> np.ndarray | None:
        return self.joint(kp_index.NOSE) if self.joint(kp_index.NOSE) is not None else \
            self.mid(kp_index.L_EAR, kp_index.R_EAR)


class _Track(list):
    """A person's sightings in time order, with their times for finding a window by bisection
    (a ten-minute track has 3,000 sightings: scanning it for every one of them is too slow)."""

    def __init__(self, sightings):
        super().__init__(sorted(sightings, key=lambda s: s.t))
        self.times = [s.t for s in self]

    def between(self, t0: float, t1: float) -> list[_Seen]:
        """Sightings with t0 <= t < t1."""
        return self[bisect_left(self.times, t0 - 1e-9):bisect_left(self.times, t1 - 1e-9)]


@dataclass
class _Thing:
    instance_id: int
    category: str
    box: tuple[float, float, float, float]

    @property
    def centre(self) -> np.ndarray:
        return np.array([(self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2])


@dataclass
class _Support:
    """Frames where one rule held for one (instance, action, other), with a note of why."""

    times: list[float] = field(default_factory=list)
    note: str = ""


def perceive(frames: list[Frame], size: tuple[int, int],
             looks: list[FrameLook] | tuple = ()) -> list[Action]:
    """Every action of every tracked person, as scored intervals."""
    people: dict[int, list[_Seen]] = defaultdict(list)
    things: dict[int, list[_Thing]] = defaultdict(list)   # frame -> objects in it
    on_frame: dict[int, dict[int, _Seen]] = defaultdict(dict)
    for index, t, detections in frames:
        for d in detections:
            if d.category == "person":
                seen = _seen(index, t, d)
                people[d.track_id].append(seen)
                on_frame[index][d.track_id] = seen
            elif d.category != MOVING and d.confidence > 0:
                things[index].append(_Thing(d.track_id, d.category, d.box))
    pan = _picture_motion(looks, size[0])
    support: dict[tuple[int, str, int | None], _Support] = defaultdict(_Support)

    def mark(pid: int, action: str, t: float, note: str, other: int | None = None) -> None:
        s = support[(pid, action, other)]
        s.times.append(t)
        s.note = s.note or note

    people = {pid: _Track(sightings) for pid, sightings in people.items()}
    speeds: dict[tuple[int, float], float | None] = {}
    for pid, track in people.items():
        speeds.update({(pid, s.t): _speed(track, k, pan) for k, s in enumerate(track)})
    for pid, track in people.items():
        riding_times = set()
        for s in track:
            for thing in things.get(s.frame, ()):
                for action, note in _with_object(s, thing):
                    mark(pid, action, s.t, note, thing.instance_id)
                    if action == "riding":
                        riding_times.add(s.t)
        _body(pid, track, speeds, pan, riding_times, support, mark)
    _between(on_frame, things, speeds, mark)
    return _intervals(support, people)


def _seen(index: int, t: float, d: Detection) -> _Seen:
    p = d.pose
    kp = None if p is None or p.keypoints is None else np.asarray(p.keypoints, dtype=np.float32)
    return _Seen(t, index, d.box, kp, p.posture if p else None, p.facing if p else None,
                 p.arm_raised if p else None, d.confidence == 0)


def _picture_motion(looks, width: int):
    """The picture's own sideways and vertical motion (pixels a second) at a time: what the
    camera's pan and tilt move every point by, taken out of a person's speed."""
    known = [(lk.t, (lk.pan or 0.0) * width, (lk.tilt or 0.0) * width) for lk in looks]

    def at(t: float) -> np.ndarray:
        if not known:
            return np.zeros(2)
        nearest = min(known, key=lambda k: abs(k[0] - t))
        return np.array(nearest[1:]) if abs(nearest[0] - t) <= 1.0 else np.zeros(2)
    return at


def _window(track: _Track, k: int, seconds: float) -> list[_Seen]:
    t = track[k].t
    return track.between(t - seconds / 2 - 1e-6, t + seconds / 2 + 2e-6)


def _speed(track: _Track, k: int, pan) -> float | None:
    """How fast the foot point moves around frame k, body heights a second; None without a
    second sighting within a second."""
    near = [s for s in _window(track, k, 1.2) if not s.interpolated] or [track[k]]
    first, last = near[0], near[-1]
    dt = last.t - first.t
    if dt < 0.15:
        return None
    moved = np.subtract(last.foot, first.foot) / dt - pan((first.t + last.t) / 2)
    height = float(np.median([s.height for s in near]))
    return float(np.linalg.norm(moved)) / height


def _body(pid: int, track: list[_Seen], speeds, pan, riding: set[float],
          support, mark) -> None:
    for k, s in enumerate(track):
        if s.interpolated:
            continue
        speed = speeds[(pid, s.t)]
        upright = s.posture == "standing" or (s.posture is None and s.kp is not None
                                               and s.joint(kp_index.L_ANKLE) is not None)
        if s.t in riding:
            pass  # a rider's speed is the bicycle's
        elif speed is not None and upright and speed >= RUN:
            mark(pid, "running", s.t, f"the feet move {speed:.1f} body heights a second")
        elif speed is not None and upright and speed >= WALK:
            mark(pid, "walking", s.t, f"the feet move {speed:.1f} body heights a second")
        elif s.posture == "standing":
            mark(pid, "standing", s.t, "standing posture, feet still")
        if s.posture in ("sitting", "lying", "bending") and s.t not in riding:
            mark(pid, s.posture, s.t, f"{s.posture} posture from the keypoints")
        if s.arm_raised:
            mark(pid, "raising arms", s.t, "a wrist above its shoulder")
            if _waving(track, k):
                mark(pid, "waving", s.t, "a raised hand moving side to side")
        if _jumping(track, k, camera_still=abs(pan(s.t)[1]) < 0.5 * s.height):
            mark(pid, "jumping", s.t, "feet and hips rise together and come down")
        if note := _falling(track, k):
            mark(pid, "falling", s.t, note)
        if note := _turning(track, k):
            mark(pid, "turning round", s.t, note)
        if _punching(track, k):
            mark(pid, "punching", s.t, "a wrist thrown out to a straight arm at shoulder height")
        if _climbing(track, k):
            mark(pid, "climbing", s.t, "rising steadily without getting smaller")
        if _dancing(track, k, speed):
            mark(pid, "dancing", s.t, "limbs moving fast around a body that stays in place")
        if _at_face(s):
            mark(pid, "touching the face", s.t, "a hand at the face")
    walked = set(support[(pid, "walking", None)].times) | set(support[(pid, "running", None)].times)
    for (who, action, other), held in list(support.items()):
        if who == pid and action == "holding" and other is not None:
            for t in held.times:
                if t in walked:
                    mark(pid, "carrying", t, f"holding #{other} while walking", other)


def _at_face(s: _Seen) -> bool:
    """A wrist within FACE_HAND head widths of the nose. The head's width is read off the ears
    or eyes where both are seen, not the torso: someone filmed close up, as in make-up and
    shaving clips, shows neither hips nor often shoulders."""
    nose = s.joint(kp_index.NOSE)
    if nose is None or not s.wrists():
        return False
    ears = s.joint(kp_index.L_EAR), s.joint(kp_index.R_EAR)
    eyes = s.joint(kp_index.L_EYE), s.joint(kp_index.R_EYE)
    if ears[0] is not None and ears[1] is not None:
        head = _dist(*ears)
    elif eyes[0] is not None and eyes[1] is not None:
        head = 2.5 * _dist(*eyes)
    else:  # a face in profile: a head is about 0.4 of a torso's length
        head = 0.4 * s.torso
    return head >= 4 and any(_dist(w, nose) <= FACE_HAND * head for w in s.wrists())


def _waving(track: _Track, k: int) -> bool:
    """A raised wrist that moves sideways by a third of a torso, back and forth, within 1.5 s."""
    xs = []
    for s in _window(track, k, 1.5):
        if s.arm_raised and (w := s.wrists()):
            shoulder = s.mid(kp_index.L_SHOULDER, kp_index.R_SHOULDER)
            if shoulder is not None:
                xs.append((min(w, key=lambda p: p[1])[0] - shoulder[0]) / s.torso)
    steps = np.diff(xs)
    big = steps[np.abs(steps) >= 0.33]
    return len(big) >= 2 and bool(np.any(np.sign(big[1:]) != np.sign(big[:-1])))


def _ankles_y(s: _Seen) -> float | None:
    ankles = [a[1] for a in (s.joint(kp_index.L_ANKLE), s.joint(kp_index.R_ANKLE)) if a is not None]
    return max(ankles) if ankles else None


def _feet_y(s: _Seen) -> float:
    ankles = _ankles_y(s)
    return s.box[3] if ankles is None else ankles


def _jumping(track: _Track, k: int, camera_still: bool) -> bool:
    """Ankles and hips rise together by a fifth of the body above their lowest place within a
    second, and the ankles come down again, while the body keeps its size and the camera holds
    still (a tilt or a shake lifts everyone in the picture)."""
    s = track[k]
    near = [n for n in _window(track, k, 2.0) if not n.interpolated and _ankles_y(n) is not None]
    hips = s.mid(kp_index.L_HIP, kp_index.R_HIP)
    if not camera_still or len(near) < 3 or hips is None or _ankles_y(s) is None:
        return False
    ground = max(_ankles_y(n) for n in near)
    hip_low = max(h[1] for n in near if (h := n.mid(kp_index.L_HIP, kp_index.R_HIP)) is not None)
    height = float(np.median([n.height for n in near]))
    came_down = any(_ankles_y(n) > _ankles_y(s) + JUMP * height / 2 for n in near if n.t > s.t)
    # Walking off into the distance also raises the feet in the picture: the body shrinks then.
    same_size = 0.85 <= s.height / height <= 1.15
    return (ground - _ankles_y(s) >= JUMP * height and hip_low - hips[1] >= JUMP * height * 0.7
            and came_down and same_size)


def _falling(track: _Track, k: int) -> str:
    s = track[k]
    if s.posture != "lying":
        return ""
    before = [n for n in track.between(s.t - FALL_SECONDS, s.t) if n.posture == "standing"]
    return f"standing at {before[-1].t:.1f} s, lying at {s.t:.1f} s" if before else ""


def _turning(track: _Track, k: int) -> str:
    """Facing one way on two readings in the two seconds before, the other way now and on the
    next reading: a single flipped reading is the pose model's left-right confusion."""
    s = track[k]
    if s.facing not in ("camera", "away"):
        return ""
    other = "away" if s.facing == "camera" else "camera"
    before = [n for n in track.between(s.t - TURN_SECONDS, s.t) if n.facing]
    after = [n for n in track[k + 1:] if n.facing][:1]
    if sum(n.facing == other for n in before) < 2 or before[-1].facing != other or \
            not after or after[0].facing != s.facing:
        return ""
    words = {"camera": "the camera", "away": "away"}
    return f"facing {words[other]} at {before[-1].t:.1f} s, {words[s.facing]} at {s.t:.1f} s"


def _reach(s: _Seen) -> list[tuple[float, float]]:
    """(wrist-to-shoulder distance, wrist height above the shoulder) per seen arm, in torsos."""
    out = []
    for sh, wr in ((kp_index.L_SHOULDER, kp_index.L_WRIST), (kp_index.R_SHOULDER, kp_index.R_WRIST)):
        a, b = s.joint(sh), s.joint(wr)
        if a is not None and b is not None:
            out.append((_dist(b, a) / s.torso, float(a[1] - b[1]) / s.torso))
    return out


def _punching(track: _Track, k: int) -> bool:
    s = track[k]
    before = [n for n in track.between(s.t - 0.45, s.t) if n.kp is not None]
    if not before or s.kp is None:
        return False
    now, then = _reach(s), _reach(before[-1])
    return any(d >= 1.0 and abs(up) <= 0.5 and d - d0 >= 0.6
               for (d, up), (d0, _) in zip(now, then))


def _climbing(track: _Track, k: int) -> bool:
    near = [n for n in _window(track, k, 2.0) if not n.interpolated]
    if len(near) < 3 or near[-1].t - near[0].t < 1.0:
        return False
    first, last = near[0], near[-1]
    rise = (first.foot[1] - last.foot[1]) / float(np.median([n.height for n in near]))
    sideways = abs(last.foot[0] - first.foot[0]) / float(np.median([n.height for n in near]))
    return rise / (last.t - first.t) >= 0.2 and last.height / first.height >= 0.9 and \
        rise >= sideways * 0.5


def _dancing(track: _Track, k: int, speed: float | None) -> bool:
    """Hands moving fast (two and a half torso lengths a second around the hips) through three
    seconds while the body stays put: walking and ball games swing the arms too, but move on
    or stop."""
    near = [n for n in _window(track, k, 3.0) if n.kp is not None and not n.interpolated]
    if len(near) < 8 or speed is None or speed >= WALK:
        return False
    moves = []
    for a, b in zip(near, near[1:]):
        ca, cb = a.mid(kp_index.L_HIP, kp_index.R_HIP), b.mid(kp_index.L_HIP, kp_index.R_HIP)
        if ca is None or cb is None or b.t <= a.t:
            continue
        for j in (kp_index.L_WRIST, kp_index.R_WRIST):
            pa, pb = a.joint(j), b.joint(j)
            if pa is not None and pb is not None:
                moves.append(_dist(pb - cb, pa - ca) / a.torso / (b.t - a.t))
    return len(moves) >= 10 and float(np.median(moves)) >= 2.5


def _dist(a: np.ndarray, b: np.ndarray) -> float:
    # math.hypot: numpy's norm costs more than the rules themselves on two numbers.
    return math.hypot(float(a[0] - b[0]), float(a[1] - b[1]))


def _grown(box, by: float):
    x1, y1, x2, y2 = box
    return x1 - by, y1 - by, x2 + by, y2 + by


def _inside(p: np.ndarray, box) -> bool:
    return box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3]


def _with_object(s: _Seen, thing: _Thing) -> list[tuple[str, str]]:
    """What the person does with one object on one frame, with why."""
    found = []
    ref = f"{thing.category} #{thing.instance_id}"
    if thing.category in RIDDEN and (note := _riding(s, thing)):
        found.append(("riding", note))
        return found
    if thing.category not in HANDHELD:
        return found
    grown = _grown(thing.box, HOLD_REACH * s.torso)
    held = [w for w in s.wrists() if _inside(w, grown)]
    head = s.head()
    at_face = head is not None and \
        _dist(thing.centre, head) <= FACE_REACH * s.torso
    if held:
        found.append(("holding", f"a wrist on the {ref}"))
        if thing.category in SWUNG and (s.arm_raised or any(up >= 0 for _, up in _reach(s))):
            found.append(("swinging", f"the {ref} held with the arms up"))
    if thing.category == "cell phone" and (held or at_face):
        found.append(("using a phone", f"the {ref} {'in hand' if held else 'at the head'}"))
    if at_face and (held or thing.category in DRINKS | FOOD):
        if thing.category in DRINKS:
            found.append(("drinking", f"the {ref} raised to the face"))
        elif thing.category in FOOD:
            found.append(("eating", f"the {ref} raised to the face"))
    return found


def _riding(s: _Seen, vehicle: _Thing) -> str:
    x1, y1, x2, y2 = vehicle.box
    hips = s.mid(kp_index.L_HIP, kp_index.R_HIP)
    centre = hips if hips is not None else np.array([(s.box[0] + s.box[2]) / 2,
                                                      (s.box[1] + s.box[3]) / 2])
    margin = 0.1 * (x2 - x1)
    if not x1 - margin <= centre[0] <= x2 + margin:
        return ""
    if vehicle.category == "skateboard":  # stood on: the board is at the feet
        feet = _feet_y(s)
        ok = y1 - 0.15 * s.height <= feet <= y2 + 0.1 * s.height
        return f"feet on the skateboard #{vehicle.instance_id}" if ok else ""
    if centre[1] > (y1 + y2) / 2 + 0.1 * (y2 - y1):  # hips below the middle: beside or behind
        return ""
    feet_up = _feet_y(s) <= y2 - 0.12 * (y2 - y1)
    if s.posture == "sitting" or feet_up:
        return f"hips over the {vehicle.category} #{vehicle.instance_id}, " + \
            ("seated" if s.posture == "sitting" else "feet off the ground")
    return ""


def _gaze(s: _Seen) -> int:
    """+1 looking right in the picture, -1 left, 0 unknown: the nose beside the shoulders'
    midpoint (a face seen in profile)."""
    nose, shoulders = s.joint(kp_index.NOSE), s.mid(kp_index.L_SHOULDER, kp_index.R_SHOULDER)
    if nose is None or shoulders is None or s.facing != "side":
        return 0
    offset = (nose[0] - shoulders[0]) / s.torso
    return 1 if offset >= 0.25 else -1 if offset <= -0.25 else 0


def _between(on_frame: dict[int, dict[int, _Seen]], things: dict[int, list[_Thing]], speeds,
             mark) -> None:
    ball_near: list[tuple[float, int, int]] = []   # (t, person, ball) a ball at a hand
    punches = defaultdict(set)
    for index, seen in on_frame.items():
        for pid, s in seen.items():
            for thing in things.get(index, ()):
                if thing.category in THROWN and any(
                        _dist(w, thing.centre) <= 0.6 * s.torso for w in s.wrists()):
                    ball_near.append((s.t, pid, thing.instance_id))
        ids = sorted(seen)
        for i, a_id in enumerate(ids):
            for b_id in ids[i + 1:]:
                a, b = seen[a_id], seen[b_id]
                if a.interpolated or b.interpolated or not 0.6 <= a.height / b.height <= 1.67:
                    continue
                # Cheap first: every rule below wants them within four torsos, under a body
                # height each (a crowd has hundreds of pairs a frame, nearly all far apart).
                if abs(a.foot[0] - b.foot[0]) > 4 * max(a.height, b.height):
                    continue
                torso = (a.torso + b.torso) / 2
                # Side by side for a photograph, both facing the camera, arms round shoulders
                # and hands together: that is posing, not hugging or holding hands.
                posing = a.facing == "camera" and b.facing == "camera"
                left, right = (a, b) if a.foot[0] <= b.foot[0] else (b, a)
                gap = abs(right.foot[0] - left.foot[0])
                pair = [(a_id, b_id), (b_id, a_id)]
                if gap <= 4 * torso and _gaze(left) == 1 and _gaze(right) == -1:
                    for p, q in pair:
                        mark(p, "facing each other", a.t, f"in profile, looking at #{q}", q)
                if not posing and 0.5 * torso <= gap <= 3 * torso and _hands_meet(a, b, torso):
                    for p, q in pair:
                        mark(p, "hands joined", a.t, f"a wrist at a wrist of #{q}", q)
                # A pair passing in front of each other overlaps too: huggers stand still.
                still = all((speeds.get((p, a.t)) or 0.0) < WALK for p in (a_id, b_id))
                heads = (a.head(), b.head())
                close = all(h is not None for h in heads) and _dist(heads[0], heads[1]) <= 0.8 * torso
                if still and close and not posing and _iou(a.box, b.box) >= 0.3 and \
                        (_arms_round(a, b) or _arms_round(b, a)):
                    for p, q in pair:
                        mark(p, "hugging", a.t, f"boxes overlapping, arms round #{q}", q)
                if gap <= 3 * torso:
                    punches[(a_id, b_id)].add(a.t)
    for t, pid, ball in ball_near:
        later = [(t2, p2) for t2, p2, b2 in ball_near if b2 == ball and p2 != pid and 0 < t2 - t <= 3]
        if later:
            mark(pid, "passing a ball", t, f"the ball #{ball} goes to #{later[0][1]}", later[0][1])
    _throws(on_frame, things, ball_near, mark)
    _fights(punches, on_frame, mark)


def _hands_meet(a: _Seen, b: _Seen, torso: float) -> bool:
    """A wrist of each, a third of a torso apart at most, between hip and shoulder height: two
    people side by side, hand in hand (in a crowd, a hand merely near another's is common)."""
    for wa in a.wrists():
        for wb in b.wrists():
            if _dist(wa, wb) > 0.35 * torso:
                continue
            heights = [s.mid(kp_index.L_SHOULDER, kp_index.R_SHOULDER) for s in (a, b)]
            hips = [s.mid(kp_index.L_HIP, kp_index.R_HIP) for s in (a, b)]
            if any(p is None for p in (*heights, *hips)):
                continue
            top = min(h[1] for h in heights)
            low = max(h[1] for h in hips) + 0.6 * torso
            if top <= (wa[1] + wb[1]) / 2 <= low:
                return True
    return False


def _arms_round(a: _Seen, b: _Seen) -> bool:
    """A wrist of `a` on the torso of `b` (shoulders to hips, across the box)."""
    top = b.mid(kp_index.L_SHOULDER, kp_index.R_SHOULDER)
    low = b.mid(kp_index.L_HIP, kp_index.R_HIP)
    if top is None or low is None:
        return False
    torso_box = (b.box[0], top[1] - 0.2 * b.torso, b.box[2], low[1])
    return any(_inside(w, torso_box) for w in a.wrists())


def _throws(on_frame, things, ball_near, mark) -> None:
    """A ball at a hand, then more than a torso and a half from it within a second."""
    by_ball = defaultdict(list)
    for index, items in things.items():
        for thing in items:
            if thing.category in THROWN:
                by_ball[thing.instance_id].append((index, thing))
    times = {index: next(iter(seen.values())).t for index, seen in on_frame.items() if seen}
    for t, pid, ball in ball_near:
        for index, thing in by_ball[ball]:
            s = on_frame.get(index, {}).get(pid)
            if s is None or not 0 < times.get(index, -1) - t <= 1.0:
                continue
            if all(_dist(w, thing.centre) >= 1.5 * s.torso for w in s.wrists()) \
                    and s.wrists():
                mark(pid, "throwing", t, f"the {thing.category} #{ball} leaves the hand", ball)
                break


def _fights(close: dict[tuple[int, int], set[float]], on_frame, mark) -> None:
    """A pair close together while one of them punches."""
    sightings: dict[int, list[_Seen]] = defaultdict(list)
    for seen in on_frame.values():
        for pid, s in seen.items():
            sightings[pid].append(s)
    tracks = {pid: _Track(found) for pid, found in sightings.items()}
    struck = {pid: {track[k].t for k in range(len(track)) if _punching(track, k)}
              for pid, track in tracks.items()}
    for (a, b), times in close.items():
        for t in times:
            if any(abs(t - p) <= 1.0 for p in struck.get(a, ()) | struck.get(b, ())):
                mark(a, "fighting", t, f"close to #{b}, one of them punching", b)
                mark(b, "fighting", t, f"close to #{a}, one of them punching", a)


def _iou(a, b) -> float:
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x2 - x1) * max(0.0, y2 - y1)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _intervals(support: dict[tuple[int, str, int | None], _Support],
               people: dict[int, list[_Seen]]) -> list[Action]:
    """Runs of supporting frames, gaps up to BRIDGE seconds bridged, scored by the share of the
    person's frames in the run that support it."""
    out = []
    for (pid, action, other), held in support.items():
        times = sorted(set(held.times))
        if not times:
            continue
        seen_at = [s.t for s in people.get(pid, ()) if not s.interpolated]
        needed = 1 if action in EVENTS else min(2, len(seen_at))
        run = [times[0]]
        for t in times[1:] + [math.inf]:
            if t - run[-1] <= BRIDGE + 1e-6:
                run.append(t)
                continue
            if len(run) >= needed:
                frames = [x for x in seen_at if run[0] - 1e-6 <= x <= run[-1] + 1e-6] or run
                score = min(1.0, len(run) / len(frames))
                out.append(Action(pid, action, run[0], run[-1], score,
                                  f"{held.note} ({len(run)} of {len(frames)} frames)", other))
            run = [t]
    out.sort(key=lambda a: (a.t_start, a.instance_id, a.action))
    return out
