"""Actions with an object, read from a person and an object on one frame: holding, swinging,
using a phone, drinking, eating, riding. (Carrying is holding while walking: the body rules add
it; throwing follows a ball over frames: the between-people rules read it with passing.)"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict

import numpy as np

from backend.ingest.action_sightings import Seen, Thing, dist, feet_y, grown_box, inside, reach
from models import pose as kp_index

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
PARKED = 0.1                # a ridden kind whose box moves less than this (its own heights a
PARKED_SECONDS = 2.0        # second) over about these seconds stands still: nobody rides it
HOLD_REACH = 0.15           # a wrist this far outside an object's box (torso lengths) holds it
FACE_REACH = 0.8            # an object this near the nose (torso lengths) is at the face


def with_object(s: Seen, thing: Thing) -> list[tuple[str, str]]:
    """What the person does with one object on one frame, with why."""
    found = []
    ref = f"{thing.category} #{thing.instance_id}"
    if thing.category in RIDDEN and (note := _riding(s, thing)):
        found.append(("riding", note))
        return found
    if thing.category not in HANDHELD:
        return found
    grown = grown_box(thing.box, HOLD_REACH * s.torso)
    held = [w for w in s.wrists() if inside(w, grown)]
    head = s.head()
    at_face = head is not None and \
        dist(thing.centre, head) <= FACE_REACH * s.torso
    if held:
        found.append(("holding", f"a wrist on the {ref}"))
        if thing.category in SWUNG and (s.arm_raised or any(up >= 0 for _, up in reach(s))):
            found.append(("swinging", f"the {ref} held with the arms up"))
    if thing.category == "cell phone" and (held or at_face):
        found.append(("using a phone", f"the {ref} {'in hand' if held else 'at the head'}"))
    if at_face and (held or thing.category in DRINKS | FOOD):
        if thing.category in DRINKS:
            found.append(("drinking", f"the {ref} raised to the face"))
        elif thing.category in FOOD:
            found.append(("eating", f"the {ref} raised to the face"))
    return found


def _riding(s: Seen, vehicle: Thing) -> str:
    x1, y1, x2, y2 = vehicle.box
    hips = s.mid(kp_index.L_HIP, kp_index.R_HIP)
    centre = hips if hips is not None else np.array([(s.box[0] + s.box[2]) / 2,
                                                      (s.box[1] + s.box[3]) / 2])
    margin = 0.1 * (x2 - x1)
    if not x1 - margin <= centre[0] <= x2 + margin:
        return ""
    if vehicle.category == "skateboard":  # stood on: the board is at the feet
        feet = feet_y(s)
        ok = y1 - 0.15 * s.height <= feet <= y2 + 0.1 * s.height
        return f"feet on the skateboard #{vehicle.instance_id}" if ok else ""
    if centre[1] > (y1 + y2) / 2 + 0.1 * (y2 - y1):  # hips below the middle: beside or behind
        return ""
    # Seen from above, someone walking far behind a vehicle has their hips above it in the
    # picture too (on MOT16-04, people metres beyond a row of parked motorcycles 'rode'
    # them): a rider's legs reach down into its box.
    if feet_y(s) < y1:
        return ""
    feet_up = feet_y(s) <= y2 - 0.12 * (y2 - y1)
    if s.posture == "sitting" or feet_up:
        return f"hips over the {vehicle.category} #{vehicle.instance_id}, " + \
            ("seated" if s.posture == "sitting" else "feet off the ground")
    return ""


def parked(things: dict[int, list[Thing]], times: dict[int, float], pan) -> set[tuple[int, int]]:
    """(frame, instance) of each bicycle, motorbike, horse ... that stands still there: seen
    over half of PARKED_SECONDS or more around the frame, its box's centre moved under PARKED
    of its height a second, the camera's own motion (`pan`) taken out. Seen from above,
    people passing a row of parked motorcycles and bicycles stand over them in the picture
    (on MOT16-04 they 'rode' them). A single picture, or a vehicle seen only a moment, is
    never parked."""
    seen: dict[int, list[tuple[float, int, Thing]]] = defaultdict(list)
    for frame, found in things.items():
        for thing in found:
            if thing.category in RIDDEN:
                seen[thing.instance_id].append((times[frame], frame, thing))
    still = set()
    for instance, sightings in seen.items():
        sightings.sort(key=lambda x: x[0])
        ts = [x[0] for x in sightings]
        for t, frame, thing in sightings:
            (t0, _, a) = sightings[bisect_left(ts, t - PARKED_SECONDS / 2 - 1e-6)]
            (t1, _, b) = sightings[bisect_right(ts, t + PARKED_SECONDS / 2 + 1e-6) - 1]
            if t1 - t0 < PARKED_SECONDS / 2 - 1e-6:
                continue
            moved = (b.centre - a.centre) / (t1 - t0) - pan((t0 + t1) / 2,
                                                            (a.centre + b.centre) / 2)
            if np.linalg.norm(moved) < PARKED * max(thing.box[3] - thing.box[1], 1.0):
                still.add((frame, instance))
    return still
