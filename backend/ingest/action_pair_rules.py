"""Actions between people, read from everyone seen on a frame together: facing each other, hands
joined, hugging, pushing, fighting, passing a ball; and throwing, a ball leaving a hand, found
with the same balls-at-hands as passing."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from backend.ingest.action_body_rules import WALK
from backend.ingest.action_sightings import Seen, Thing, Track, dist, inside, iou, reach
from models import pose as kp_index

THROWN = {"sports ball", "frisbee"}
PUSH_REACH = 0.6     # the pusher's wrist this far from its shoulder, torsos: an arm put out
PUSH_LOW = 0.6       # and no further than this below the shoulder, torsos (not hanging)
PUSH_AWAY = 0.5      # the other's feet then move this far away from the pusher, torsos,
PUSH_SECONDS = 1.0   # within this long
EMBRACE_IOU = 0.3    # boxes overlapping this much: an embrace (hugging needs it; a push
                     # within PUSH_SECONDS of it is not one)
GROUND_LINE = 0.1    # box bottoms this near (body heights): feet on one line, side by side,
                     # not one standing behind the other
EMBRACE_HEIGHTS = 1.25  # boxes of about one height: not a box cut by the frame's edge, a child
EMBRACE_SECONDS = 1.0   # overlapping on one ground line this long, staying put: an embrace
EMBRACE_STILL = 0.25    # staying put: each one's feet within this many body heights throughout
APART = 0.5             # feet this far apart before (body heights, about a body's width):
                        # they came together


def _gaze(s: Seen) -> int:
    """+1 looking right in the picture, -1 left, 0 unknown: the nose beside the shoulders'
    midpoint (a face seen in profile)."""
    nose, shoulders = s.joint(kp_index.NOSE), s.mid(kp_index.L_SHOULDER, kp_index.R_SHOULDER)
    if nose is None or shoulders is None or s.facing != "side":
        return 0
    offset = (nose[0] - shoulders[0]) / s.torso
    return 1 if offset >= 0.25 else -1 if offset <= -0.25 else 0


def between_people(on_frame: dict[int, dict[int, Seen]], things: dict[int, list[Thing]],
                   speeds, struck: dict[int, set[float]], mark) -> None:
    """Marks what each pair seen together on a frame does, and passes and throws of a ball.
    `struck`: each person's times of a punch, as the body rules read them."""
    ball_near: list[tuple[float, int, int]] = []   # (t, person, ball) a ball at a hand
    punches = defaultdict(set)
    shoves: list[tuple[float, Seen, int, Seen, int]] = []   # (t, pusher, id, pushed, id)
    embraced = defaultdict(list)   # pair -> times their boxes overlapped as in a hug
    together = defaultdict(list)   # pair -> times their boxes overlapped on one ground line
    for index, seen in on_frame.items():
        for pid, s in seen.items():
            for thing in things.get(index, ()):
                if thing.category in THROWN and any(
                        dist(w, thing.centre) <= 0.6 * s.torso for w in s.wrists()):
                    ball_near.append((s.t, pid, thing.instance_id))
        ids = sorted(seen)
        for i, a_id in enumerate(ids):
            for b_id in ids[i + 1:]:
                a, b = seen[a_id], seen[b_id]
                # Cheap first: every rule below wants them within four torsos, under a body
                # height each (a crowd has hundreds of pairs a frame, nearly all far apart).
                if not 0.6 <= a.height / b.height <= 1.67 or \
                        abs(a.foot[0] - b.foot[0]) > 4 * max(a.height, b.height):
                    continue
                # Held boxes count here: of an embracing pair one is often hidden behind
                # the other, and the tracker holds their box where it was.
                if iou(a.box, b.box) >= EMBRACE_IOU and \
                        1 / EMBRACE_HEIGHTS <= a.height / b.height <= EMBRACE_HEIGHTS and \
                        abs(a.box[3] - b.box[3]) <= GROUND_LINE * max(a.height, b.height):
                    together[(a_id, b_id)].append(a.t)
                if a.interpolated or b.interpolated:
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
                close = all(h is not None for h in heads) and dist(heads[0], heads[1]) <= 0.8 * torso
                overlap = iou(a.box, b.box)
                if still and close and not posing and overlap >= EMBRACE_IOU and \
                        (_arms_round(a, b) or _arms_round(b, a)):
                    for p, q in pair:
                        mark(p, "hugging", a.t, f"boxes overlapping, arms round #{q}", q)
                if overlap >= EMBRACE_IOU:
                    embraced[(a_id, b_id)].append(a.t)
                shoves += [(a.t, *pusher) for pusher in ((a, a_id, b, b_id), (b, b_id, a, a_id))
                           if _hand_out_on(pusher[0], pusher[2])]
                if gap <= 3 * torso:
                    punches[(a_id, b_id)].add(a.t)
    for t, pid, ball in ball_near:
        later = [(t2, p2) for t2, p2, b2 in ball_near if b2 == ball and p2 != pid and 0 < t2 - t <= 3]
        if later:
            mark(pid, "passing a ball", t, f"the ball #{ball} goes to #{later[0][1]}", later[0][1])
    _throws(on_frame, things, ball_near, mark)
    tracks = _tracks(on_frame)
    _pushes(shoves, tracks, embraced, struck, mark)
    _embraces(together, tracks, mark)
    _fights(punches, struck, mark)


def _hands_meet(a: Seen, b: Seen, torso: float) -> bool:
    """A wrist of each, a third of a torso apart at most, between hip and shoulder height: two
    people side by side, hand in hand (in a crowd, a hand merely near another's is common)."""
    for wa in a.wrists():
        for wb in b.wrists():
            if dist(wa, wb) > 0.35 * torso:
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


def _arms_round(a: Seen, b: Seen) -> bool:
    """A wrist of `a` on the torso of `b` (shoulders to hips, across the box)."""
    top = b.mid(kp_index.L_SHOULDER, kp_index.R_SHOULDER)
    low = b.mid(kp_index.L_HIP, kp_index.R_HIP)
    if top is None or low is None:
        return False
    torso_box = (b.box[0], top[1] - 0.2 * b.torso, b.box[2], low[1])
    return any(inside(w, torso_box) for w in a.wrists())


def _hand_out_on(a: Seen, b: Seen) -> bool:
    """An arm of `a` put out (PUSH_REACH, the wrist no lower than PUSH_LOW below the shoulder)
    with its wrist on the torso of `b`. An arm hanging at the side is as long, and its wrist is
    on the torso of anyone walking close past."""
    return _arms_round(a, b) and any(d >= PUSH_REACH and up >= -PUSH_LOW for d, up in reach(a))


def _pushes(shoves, tracks: dict[int, Track], embraced, struck, mark) -> None:
    """A hand put out on someone standing still, then their feet moving away from the pusher
    by PUSH_AWAY torsos within PUSH_SECONDS: a push. A hand laid on a shoulder moves no one;
    people walking past each other overlap, hands on each other's boxes, but were moving
    before; a hug starts and ends with arms round the other, but overlaps the two boxes
    (EMBRACE_IOU) within that time; and a fist thrown (`punching`) just before knocks the other
    back too: that is a punch."""
    for t, a, a_id, b, b_id in shoves:
        pair = (min(a_id, b_id), max(a_id, b_id))
        if any(abs(t - t2) <= PUSH_SECONDS for t2 in embraced.get(pair, ())) or \
                any(abs(t - t2) <= PUSH_SECONDS / 2 for t2 in struck.get(a_id, ())):
            continue
        track = tracks[b_id]
        before = [n for n in track.between(t - PUSH_SECONDS, t) if not n.interpolated]
        if any(abs(n.foot[0] - b.foot[0]) >= PUSH_AWAY / 2 * b.torso for n in before):
            continue
        away = 1.0 if b.foot[0] >= a.foot[0] else -1.0
        later = track.between(t + 1e-6, t + PUSH_SECONDS + 1e-6)
        moved = max(((n.foot[0] - b.foot[0]) * away for n in later if not n.interpolated),
                    default=0.0)
        if moved >= PUSH_AWAY * b.torso:
            mark(a_id, "pushing", t, f"a hand out on #{b_id}, who stood still and then moves away",
                 b_id)


def _embraces(together: dict[tuple[int, int], list[float]], tracks: dict[int, Track],
              mark) -> None:
    """A pair of about one height who came together (`_came_together`), then their boxes
    overlapping with the feet on one ground line for EMBRACE_SECONDS or more, both staying put:
    an embrace, read from the boxes where the keypoints of two bodies pressed together are a
    tangle (or one body is hidden). People walking side by side overlap as long, but move; one
    standing behind another has the feet higher in the picture; a group standing together
    never came together in view. The sightings must be under half a second apart: a video
    sampled slower (a mall seen from above at 2 frames a second) showed shoppers who stopped
    side by side as hugging."""
    for (a_id, b_id), times in together.items():
        times = sorted(times)
        run = [times[0]]
        for t in times[1:] + [math.inf]:
            if t - run[-1] <= 0.45:
                run.append(t)
                continue
            if run[-1] - run[0] >= EMBRACE_SECONDS - 1e-6 and \
                    all(_stays_put(tracks[p], run[0], run[-1]) for p in (a_id, b_id)) and \
                    _came_together(tracks[a_id], tracks[b_id], run[0]):
                for at in run:
                    mark(a_id, "hugging", at, f"boxes overlapping side by side with #{b_id}", b_id)
                    mark(b_id, "hugging", at, f"boxes overlapping side by side with #{a_id}", a_id)
            run = [t]


def _came_together(a: Track, b: Track, t: float) -> bool:
    """Whether the two were APART or more apart, both seen, at some time in the two
    EMBRACE_SECONDS before t."""
    at_b = {n.t: n for n in b.between(t - 2 * EMBRACE_SECONDS, t)}
    return any(abs(n.foot[0] - at_b[n.t].foot[0]) >= APART * max(n.height, at_b[n.t].height)
               for n in a.between(t - 2 * EMBRACE_SECONDS, t) if n.t in at_b)


def _stays_put(track: Track, t0: float, t1: float) -> bool:
    near = track.between(t0, t1 + 1e-6)
    xs = [n.foot[0] for n in near]
    return bool(xs) and \
        max(xs) - min(xs) <= EMBRACE_STILL * float(np.median([n.height for n in near]))


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
            if all(dist(w, thing.centre) >= 1.5 * s.torso for w in s.wrists()) \
                    and s.wrists():
                mark(pid, "throwing", t, f"the {thing.category} #{ball} leaves the hand", ball)
                break


def _tracks(on_frame) -> dict[int, Track]:
    sightings: dict[int, list[Seen]] = defaultdict(list)
    for seen in on_frame.values():
        for pid, s in seen.items():
            sightings[pid].append(s)
    return {pid: Track(found) for pid, found in sightings.items()}


def _fights(close: dict[tuple[int, int], set[float]], struck: dict[int, set[float]], mark) -> None:
    """A pair close together while one of them punches."""
    for (a, b), times in close.items():
        for t in times:
            if any(abs(t - p) <= 1.0 for p in struck.get(a, ()) | struck.get(b, ())):
                mark(a, "fighting", t, f"close to #{b}, one of them punching", b)
                mark(b, "fighting", t, f"close to #{a}, one of them punching", a)
