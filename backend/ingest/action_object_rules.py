"""Actions with an object, read from a person and an object on one frame: holding, swinging,
using a phone, drinking, eating, riding. (Carrying is holding while walking: the body rules add
it; throwing follows a ball over frames: the between-people rules read it with passing.)"""

from __future__ import annotations

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
    feet_up = feet_y(s) <= y2 - 0.12 * (y2 - y1)
    if s.posture == "sitting" or feet_up:
        return f"hips over the {vehicle.category} #{vehicle.instance_id}, " + \
            ("seated" if s.posture == "sitting" else "feet off the ground")
    return ""
