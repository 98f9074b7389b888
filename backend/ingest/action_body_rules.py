"""Actions of the body alone, read from a person's sightings over time: standing, walking,
running, sitting, lying, bending, jumping, falling, sitting down, standing up, turning round,
raising arms, waving, punching, pointing, climbing, dancing, touching the face, upside down
(and carrying, holding while walking)."""

from __future__ import annotations

from bisect import bisect_left
from operator import attrgetter

import numpy as np

from backend.ingest.action_sightings import Seen, Track, ankles_y, arm_reach, dist, window
from models import pose as kp_index

# Foot point speed, body heights a second: a walk at 1.4 m/s is about 0.8; people change from
# walking to running at about 2 m/s (the preferred transition speed), about 1.15.
WALK, RUN = 0.25, 1.15
STEADY = 0.4                # of the way the feet went in a second, the most one step between
                            # sightings may carry in a run (sampled five times a second, a
                            # steady run puts about a fifth in each)
# A person on their feet makes a box about twice as high as wide or more: the boxes the pose
# model reads standing average 2.6-3.2 on the MOT scenes; the one-by-one clip's unread ones (at
# a table, or cut off by the frame) 1.5.
TALL = 1.8
EDGE = 0.01                 # of the picture's width or height: a box this near it is cut by it
JUMP = 0.2                  # ankles and hips above their lowest nearby place, body heights
JUMP_GAP = 0.5              # seconds: a jump is up and down within about this, so the body
                            # must be read this near before and after to see one
SPREADING = 0.04            # log of the picture's scale a second: still cameras stay under
                            # 0.011 (90th percentile), cameras carried forward are at 0.09
CLIMB_SHRINK = 0.5          # of a body's height, per body height its feet rise in the picture:
                            # walkers need to shrink this much for a rise to tell a climb
FALL_SECONDS = 2.0
TURN_SECONDS = 2.0
TURN_GAP = 0.5              # seconds: the readings either side of a turn's flip, at most
SEAT_SECONDS = 2.0          # sitting down or standing up takes a person a second or two
POINT_REACH = 0.8           # wrist from shoulder, torsos: an arm held out straight
POINT_LEVEL = 0.4           # wrist within this of the shoulder's height, torsos (a handshake
                            # is lower, at the waist)
POINT_DOWN = 0.3            # the other wrist this far below its shoulder, torsos
ONE_ARM = 0.75              # both wrists out this near each other, torsos: one arm seen twice
PUNCH_REACH = 0.9           # wrist from shoulder, torsos: the arm out straight after a punch
PUNCH_THRUST = 0.6          # and this much longer than just before
FACE_HAND = 1.3             # a wrist this near the nose (head widths) is at the face: a
                            # hand at the ear holding a phone has its wrist by the jaw


class PictureMotion:
    """How the camera moves the picture at a time and a place (pixels a second), taken out of a
    person's speed: a pan or tilt moves every point alike; a zoom, or a camera carried forward
    down a street, spreads the picture out from its centre, the faster the further out (where
    no place is given, the centre's motion). Without the spread, walkers on the sides of a
    forward-moving camera's street ran, and people standing there walked."""

    def __init__(self, looks, size: tuple[int, int]):
        width, height = size
        self._centre = np.array([width / 2, height / 2])
        self._known = sorted(((lk.t, np.array([(lk.pan or 0.0) * width,
                                               (lk.tilt or 0.0) * height]), lk.zoom or 0.0)
                              for lk in looks), key=lambda k: k[0])
        self._times = [k[0] for k in self._known]

    def __call__(self, t: float, place=None) -> np.ndarray:
        shift, spread = self._nearest(t)
        return shift if place is None else shift + spread * (np.asarray(place) - self._centre)

    def spread(self, t: float) -> float:
        """The log of the picture's scale a second: + where it grows."""
        return self._nearest(t)[1]

    def _nearest(self, t: float) -> tuple[np.ndarray, float]:
        """The measurement nearest t, none beyond a second."""
        i = bisect_left(self._times, t)
        near = [self._known[j] for j in (i - 1, i) if 0 <= j < len(self._known)]
        if not near:
            return np.zeros(2), 0.0
        when, shift, spread = min(near, key=lambda k: abs(k[0] - t))
        return (shift, spread) if abs(when - t) <= 1.0 else (np.zeros(2), 0.0)


def foot_speed(track: Track, k: int, pan) -> float | None:
    """How fast the foot point moves around frame k, body heights a second; None without a
    second sighting within a second."""
    near = [s for s in window(track, k, 1.2) if not s.interpolated] or [track[k]]
    first, last = near[0], near[-1]
    dt = last.t - first.t
    if dt < 0.15:
        return None
    middle = np.add(first.foot, last.foot) / 2
    moved = np.subtract(last.foot, first.foot) / dt - pan((first.t + last.t) / 2, middle)
    height = float(np.median([s.height for s in near]))
    return float(np.linalg.norm(moved)) / height


def _steady(track: Track, k: int, pan: PictureMotion) -> bool:
    """Whether the foot point went steadily over the second around frame k, no step between
    sightings over STEADY of the way: running feet cover it stride by stride, while a box that
    jumped (to someone else, or a half-hidden body's bottom found again) covers it at once.
    On cameras carried down a street, such jumps were 'runs' of 2 to 5 body heights a second."""
    near = [n for n in window(track, k, 1.2) if not n.interpolated]
    steps = [float(np.linalg.norm(step)) for step in _own_steps(near, pan)]
    return len(steps) < 3 or max(steps) <= STEADY * sum(steps)


def _own_steps(near: list[Seen], pan: PictureMotion) -> list[np.ndarray]:
    """Each step of the foot point between consecutive sightings (pixels), less how far the
    camera's motion carried it there."""
    return [np.subtract(b.foot, a.foot) - pan((a.t + b.t) / 2, np.add(a.foot, b.foot) / 2)
            * (b.t - a.t) for a, b in zip(near, near[1:])]


def body_actions(pid: int, track: list[Seen], speeds, pan, riding: set[float],
                 support, mark, frame_height: int, climbs: bool) -> None:
    """Marks what a person's body does on each of their sightings; then carrying, where a
    hold (marked before, by the object rules) falls on a frame they walk or run. `climbs`:
    whether this picture can tell a climb from walking away (`climbs_readable`)."""
    for k, s in enumerate(track):
        if s.interpolated:
            continue
        speed = speeds[(pid, s.t)]
        upright = s.posture == "standing" or (s.posture is None and
                                               _upright_unread(s, frame_height))
        if s.t in riding:
            pass  # a rider's speed is the bicycle's
        elif speed is not None and upright and speed >= RUN and _steady(track, k, pan):
            mark(pid, "running", s.t, f"the feet move {speed:.1f} body heights a second")
        elif speed is not None and upright and speed >= WALK:
            mark(pid, "walking", s.t, f"the feet move {speed:.1f} body heights a second")
        elif s.posture == "standing":
            mark(pid, "standing", s.t, "standing posture, feet still")
        elif upright and speed is not None:
            # On their feet by the box's shape, and still by their feet: in a video only, where
            # the feet are followed (in a single picture a tall box may be anything upright).
            mark(pid, "standing", s.t, "upright (no posture read), feet still")
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
        for change, (before, now) in POSTURE_CHANGES.items():
            if note := _changed_posture(track, k, before, now):
                mark(pid, change, s.t, note)
        if note := _turning(track, k):
            mark(pid, "turning round", s.t, note)
        if punching(track, k):
            mark(pid, "punching", s.t, "a wrist thrown out to a straight arm at shoulder height")
        if _pointing(track, k, speed):
            mark(pid, "pointing", s.t, "one arm held out straight at shoulder height, the other down")
        if climbs and _climbing(track, k, pan):
            mark(pid, "climbing", s.t, "rising steadily without getting smaller")
        if _dancing(track, k, speed):
            mark(pid, "dancing", s.t, "limbs moving fast around a body that stays in place")
        if _at_face(s):
            mark(pid, "touching the face", s.t, "a hand at the face")
        if _upside_down(s):
            mark(pid, "upside down", s.t, "hips above the shoulders and feet above the hips")
    walked = set(support[(pid, "walking", None)].times) | set(support[(pid, "running", None)].times)
    for (who, action, other), held in list(support.items()):
        if who == pid and action == "holding" and other is not None:
            for t in held.times:
                if t in walked:
                    mark(pid, "carrying", t, f"holding #{other} while walking", other)


def _upright_unread(s: Seen, frame_height: int) -> bool:
    """Whether someone whose posture the keypoints do not give is on their feet: an ankle seen,
    or a box at least TALL times as high as wide that the frame's top and bottom do not cut.
    In a crowd seen from afar most people have no joints the pose model trusts (on the scenes
    with MOT truth, 95 % of sightings), and their walks went unread; a seated or crouching body
    makes a squatter box, and a cut one's height is not its body's (an arm reaching down into
    the picture from its top edge makes a tall box too)."""
    if s.kp is not None and s.joint(kp_index.L_ANKLE) is not None:
        return True
    return not cut_top_or_bottom(s.box, frame_height) and s.height >= TALL * (s.box[2] - s.box[0])


def cut_top_or_bottom(box, frame_height: int) -> bool:
    """Whether the picture's top or bottom edge cuts the box (it lies within EDGE of it)."""
    return box[1] <= EDGE * frame_height or box[3] >= (1 - EDGE) * frame_height


def _at_face(s: Seen) -> bool:
    """A wrist within FACE_HAND head widths of the nose. The head's width is read off the ears
    or eyes where both are seen, not the torso: someone filmed close up, as in make-up and
    shaving clips, shows neither hips nor often shoulders."""
    nose = s.joint(kp_index.NOSE)
    if nose is None or not s.wrists():
        return False
    ears = s.joint(kp_index.L_EAR), s.joint(kp_index.R_EAR)
    eyes = s.joint(kp_index.L_EYE), s.joint(kp_index.R_EYE)
    if ears[0] is not None and ears[1] is not None:
        head = dist(*ears)
    elif eyes[0] is not None and eyes[1] is not None:
        head = 2.5 * dist(*eyes)
    else:  # a face in profile: a head is about 0.4 of a torso's length
        head = 0.4 * s.torso
    return head >= 4 and any(dist(w, nose) <= FACE_HAND * head for w in s.wrists())


def _upside_down(s: Seen) -> bool:
    """Hips above the shoulders by half a torso and the feet (or knees) above the hips: the
    body inverted, its weight on the hands or the head or turning over. Lying down keeps them
    level, and bending keeps the feet below."""
    shoulders = s.mid(kp_index.L_SHOULDER, kp_index.R_SHOULDER)
    hips = s.mid(kp_index.L_HIP, kp_index.R_HIP)
    legs = s.mid(kp_index.L_ANKLE, kp_index.R_ANKLE)
    legs = legs if legs is not None else s.mid(kp_index.L_KNEE, kp_index.R_KNEE)
    if shoulders is None or hips is None or legs is None:
        return False
    return shoulders[1] - hips[1] >= 0.5 * s.torso and legs[1] < hips[1]


def _waving(track: Track, k: int) -> bool:
    """A raised wrist that moves sideways by a third of a torso, back and forth, within 1.5 s."""
    xs = []
    for s in window(track, k, 1.5):
        if s.arm_raised and (w := s.wrists()):
            shoulder = s.mid(kp_index.L_SHOULDER, kp_index.R_SHOULDER)
            if shoulder is not None:
                xs.append((min(w, key=lambda p: p[1])[0] - shoulder[0]) / s.torso)
    steps = np.diff(xs)
    big = steps[np.abs(steps) >= 0.33]
    return len(big) >= 2 and bool(np.any(np.sign(big[1:]) != np.sign(big[:-1])))


def _jumping(track: Track, k: int, camera_still: bool) -> bool:
    """Ankles and hips rise together by a fifth of the body above their lowest place within a
    second, and the ankles come down again, while the body keeps its size and the camera holds
    still (a tilt or a shake lifts everyone in the picture). Only where the body is read within
    JUMP_GAP before and after: the pose model's own pass over a crowd reads it once a second,
    and there a walker's misread ankles made 18 of MOT16-04's people 'jump'."""
    s = track[k]
    near = [n for n in window(track, k, 2.0) if not n.interpolated and ankles_y(n) is not None]
    hips = s.mid(kp_index.L_HIP, kp_index.R_HIP)
    if not camera_still or len(near) < 3 or hips is None or ankles_y(s) is None:
        return False
    if not (any(s.t - JUMP_GAP <= n.t < s.t for n in near)
            and any(s.t < n.t <= s.t + JUMP_GAP for n in near)):
        return False
    ground = max(ankles_y(n) for n in near)
    hip_low = max(h[1] for n in near if (h := n.mid(kp_index.L_HIP, kp_index.R_HIP)) is not None)
    height = float(np.median([n.height for n in near]))
    came_down = any(ankles_y(n) > ankles_y(s) + JUMP * height / 2 for n in near if n.t > s.t)
    # Walking off into the distance also raises the feet in the picture: the body shrinks then.
    same_size = 0.85 <= s.height / height <= 1.15
    return (ground - ankles_y(s) >= JUMP * height and hip_low - hips[1] >= JUMP * height * 0.7
            and came_down and same_size)


def _falling(track: Track, k: int) -> str:
    s = track[k]
    if s.posture != "lying":
        return ""
    before = [n for n in track.between(s.t - FALL_SECONDS, s.t) if n.posture == "standing"]
    return f"standing at {before[-1].t:.1f} s, lying at {s.t:.1f} s" if before else ""


# A change between two postures, and the words it is said in ('standing up' is WordNet's
# "rise to one's feet", not the posture 'standing').
POSTURE_CHANGES = {"sitting down": ("standing", "sitting"), "standing up": ("sitting", "standing")}


def _changed_posture(track: Track, k: int, before: str, now: str) -> str:
    """`before` on two readings in the SEAT_SECONDS before, `now` here and on the next reading
    (`_switched`): one misread frame between the two postures is no change."""
    t = _switched(track, k, attrgetter("posture"), before, now, SEAT_SECONDS)
    return "" if t is None else f"{before} at {t:.1f} s, {now} at {track[k].t:.1f} s"


def _switched(track: Track, k: int, read, before: str, now: str, seconds: float) -> float | None:
    """When a sighting's reading (`read`: its posture, or which way it faces) was last `before`,
    where it was `before` on two readings in the `seconds` before frame k, the last of them just
    before it, and is `now` there and on the next reading; else None. A single flipped reading
    is the pose model's confusion, not a change."""
    s = track[k]
    if read(s) != now:
        return None
    earlier = [n for n in track.between(s.t - seconds, s.t) if read(n)]
    after = [n for n in track[k + 1:] if read(n)][:1]
    if sum(read(n) == before for n in earlier) < 2 or read(earlier[-1]) != before or \
            not after or read(after[0]) != now:
        return None
    return earlier[-1].t


def _kept_going(track: Track, before: float, now: float) -> bool:
    """Whether the feet went on the same way (within a right angle, at half a walking pace or
    more: seen from above, a walker coming nearer covers 0.2 body heights a second) in the
    second up to `before` and the second from `now`: someone who turns round stops or comes
    back. On MOT16-04's crowd, read once a second, the three turns were two walkers whose
    facing the pose model misread for two readings (looking down, seen from above) and one box
    that passed to someone else."""
    legs = []
    for t0, t1 in ((before - TURN_SECONDS / 2, before), (now, now + TURN_SECONDS / 2)):
        seen = [n for n in track.between(t0, t1 + 1e-6) if not n.interpolated]
        if len(seen) < 2 or seen[-1].t - seen[0].t < 0.15:
            return False
        moved = np.subtract(seen[-1].foot, seen[0].foot) / (seen[-1].t - seen[0].t)
        legs.append(moved / float(np.median([n.height for n in seen])))
    (a, b) = legs
    return min(np.linalg.norm(a), np.linalg.norm(b)) >= WALK / 2 and float(a @ b) > 0


def _turning(track: Track, k: int) -> str:
    """Facing one way on two readings in the two seconds before, the other way now and on the
    next reading: a single flipped reading is the pose model's left-right confusion. The flip
    must fall between readings TURN_GAP apart or less: bodies read once a second (the pose
    pass over a throng) cannot tell a turn from a box that passed from one walker to another
    where their paths crossed (on the Mall, the turns looked at were all such boxes)."""
    s = track[k]
    if s.facing not in ("camera", "away"):
        return ""
    other = "away" if s.facing == "camera" else "camera"
    t = _switched(track, k, attrgetter("facing"), other, s.facing, TURN_SECONDS)
    if t is None or s.t - t > TURN_GAP + 1e-6 or _kept_going(track, t, s.t):
        return ""
    words = {"camera": "the camera", "away": "away"}
    return f"facing {words[other]} at {t:.1f} s, {words[s.facing]} at {s.t:.1f} s"


def _readings_before(track: Track, k: int) -> list[Seen]:
    """The sightings with keypoints in the 0.45 s before sighting k (two frames at 5 a second):
    what a pose is compared with to tell a thrust from a held arm."""
    s = track[k]
    return [n for n in track.between(s.t - 0.45, s.t) if n.kp is not None]


def punching(track: Track, k: int) -> bool:
    """An arm straight out at shoulder height (PUNCH_REACH) that was bent on a sighting in the
    0.45 s before (PUNCH_THRUST shorter): a fist thrown. Against the nearer reading alone, a
    punch half caught on the frame between is missed."""
    s, before = track[k], _readings_before(track, k)
    if not before or s.kp is None:
        return False
    for arm, now in enumerate(arm_reach(s)):
        if now is None or now[0] < PUNCH_REACH or abs(now[1]) > 0.5:
            continue
        then = [r[arm][0] for r in map(arm_reach, before) if r[arm] is not None]
        if then and now[0] - min(then) >= PUNCH_THRUST:
            return True
    return False


def _pointing(track: Track, k: int, speed: float | None) -> bool:
    """One arm straight out at shoulder height and the other hanging (or out of view), the same
    arm out on the sighting before too: held, which a punch, a throw or a reach for a hand is
    not (a punch is out for a frame; two a second apart would make a second of pointing). The
    feet still: someone walking at another with arms out is about to push or grab them."""
    before = _readings_before(track, k)
    return bool(before) and (speed is None or speed < WALK) and \
        (arm := _arm_out(track[k])) is not None and arm == _arm_out(before[-1])


def _arm_out(s: Seen) -> int | None:
    """Which arm (0 left, 1 right) is out pointing-fashion, if one is and the other hangs. Both
    out with the wrists together (ONE_ARM), on someone not facing the camera, is one arm: seen
    side-on or from behind, the pose model puts the hidden arm's joints on the one in view (2
    stands for that). Facing the camera, two arms out are two arms."""
    arms = arm_reach(s)
    out = [i for i, a in enumerate(arms)
           if a is not None and a[0] >= POINT_REACH and abs(a[1]) <= POINT_LEVEL]
    if len(out) == 2 and s.facing != "camera" and \
            dist(s.joint(kp_index.L_WRIST), s.joint(kp_index.R_WRIST)) <= ONE_ARM * s.torso:
        return 2
    if len(out) != 1:
        return None
    other = arms[1 - out[0]]
    return out[0] if other is None or other[1] <= -POINT_DOWN else None


def _climbing(track: Track, k: int, pan: PictureMotion) -> bool:
    """Rising steadily in the picture without getting smaller, the camera's pan and tilt taken
    out (a camera tilting down lifts everyone in the picture). Not while the picture spreads
    out (a zoom, or a camera carried forward): there how far someone rises depends on how far
    off they are, which the picture's one motion does not tell (on MOT16-10, filmed walking
    down a street, far-off walkers 'climbed')."""
    near = [n for n in window(track, k, 2.0) if not n.interpolated]
    if len(near) < 3 or near[-1].t - near[0].t < 1.0:
        return False
    first, last = near[0], near[-1]
    # How much the camera's motion scaled the picture over these sightings (log).
    growth = sum(pan.spread((a.t + b.t) / 2) * (b.t - a.t) for a, b in zip(near, near[1:]))
    if abs(growth) >= SPREADING * (last.t - first.t):
        return False
    height = float(np.median([n.height for n in near]))
    went = np.sum(_own_steps(near, pan), axis=0)
    rise, sideways = -went[1] / height, abs(went[0]) / height
    return rise / (last.t - first.t) >= 0.2 and \
        last.height / first.height >= 0.9 * np.exp(growth) and rise >= sideways * 0.5


def climbs_readable(tracks: dict[int, Track], frame_height: int) -> bool:
    """Whether someone walking away on the ground visibly shrinks as they rise in this picture,
    so that a rise without shrinking is a climb. The ground's perspective is fitted as box
    height against foot height over everyone seen, where five people or more are seen over a
    fifth of the picture's height; with fewer (a lone figure filmed) the rule stands as it is.
    Seen steeply from above (MOT16-04), a walker shrinks by 14 % of their height per body
    height they rise (TUD-Campus, at eye level: 146 %), and all twelve climbs read there were
    people walking away on a flat street."""
    rows = [(s.box[3], s.height) for track in tracks.values() for s in track
            if not s.interpolated and not cut_top_or_bottom(s.box, frame_height)]
    if len(tracks) < 5 or len(rows) < 30:
        return True
    y, h = np.array(rows, dtype=float).T
    if np.percentile(y, 90) - np.percentile(y, 10) < 0.2 * frame_height:
        return True
    slope, level = np.polyfit(y, h, 1)
    for _ in range(3):  # again without the far-off boxes: people half hidden, sitting, children
        off = np.abs(h - (slope * y + level))
        near = off <= 2.5 * np.median(off) + 1e-6
        slope, level = np.polyfit(y[near], h[near], 1)
    return bool(slope >= CLIMB_SHRINK)


def _dancing(track: Track, k: int, speed: float | None) -> bool:
    """Hands moving fast (two and a half torso lengths a second around the hips) through three
    seconds while the body stays put: walking and ball games swing the arms too, but move on
    or stop."""
    near = [n for n in window(track, k, 3.0) if n.kp is not None and not n.interpolated]
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
                moves.append(dist(pb - cb, pa - ca) / a.torso / (b.t - a.t))
    return len(moves) >= 10 and float(np.median(moves)) >= 2.5
