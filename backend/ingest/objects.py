"""Everyday objects after the frame pass: each object track's kind settled, moving things named.

The frame pass leaves three kinds of raw track side by side, told apart by their id range:
people (the person detector), everyday objects (the COCO detector, from `OBJECT_IDS`) and moving things
(background subtraction, from `MOTION_IDS`: blobs with no kind). Here
- an object track takes the kind its sightings' scores add up to most (a detector calls a bottle a
  vase now and then, a vehicle a car or a truck from frame to frame);
- a moving thing that is, most of the time it is seen, the box of an object of a kind that moves
  by itself (a car, a boat, a dog) takes that kind, and the object's boxes it covers go: the same
  car tracked twice would be counted twice. Background subtraction follows a moving car better
  than a detector finds it from frame to frame, so the moving track is the one kept.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import replace

from backend import kinds
from backend.ingest.tracks import Frame, iou
from models.objects import settle_kinds
from models.types import Detection

# Raw ids of moving-object tracks start here, of everyday objects at `OBJECT_IDS`; ids the
# person tracker's re-found exits get (`tracks.ExitSplitter`) start at half of `MOTION_IDS`.
MOTION_IDS = 1_000_000
OBJECT_IDS = 2_000_000
# A moving thing overlapping an object's box this much, in this share of its sightings, is it.
_SAME_IOU = 0.3
_SAME_SHARE = 0.5


def is_moving(d: Detection) -> bool:
    return MOTION_IDS <= d.track_id < OBJECT_IDS


def is_object(d: Detection) -> bool:
    return d.track_id >= OBJECT_IDS


def settle(frames: list[Frame]) -> list[Frame]:
    """The frames with every object detection named by its track's settled kind."""
    kind = settle_kinds([d for _, _, ds in frames for d in ds if is_object(d)])
    return [(i, t, [replace(d, category=kind[d.track_id]) if is_object(d) else d for d in ds])
            for i, t, ds in frames]


def name_moving(frames: list[Frame]) -> list[Frame]:
    """The frames with moving things named after the moving kind of object they are, and
    those objects' boxes dropped where the named moving thing covers them."""
    votes: dict[int, Counter] = defaultdict(Counter)
    sightings: Counter = Counter()
    covered: dict[int, list[tuple[int, int]]] = defaultdict(list)  # moving id -> (frame, object id)
    for index, _, ds in frames:
        objects = [d for d in ds if is_object(d) and d.category in kinds.MOVING]
        for m in (d for d in ds if is_moving(d)):
            sightings[m.track_id] += 1
            best = max(objects, key=lambda o: iou(m.box, o.box), default=None)
            if best is not None and iou(m.box, best.box) >= _SAME_IOU:
                votes[m.track_id][best.category] += 1
                covered[m.track_id].append((index, best.track_id))
    named = {}
    for track, counted in votes.items():
        kind, n = counted.most_common(1)[0]
        if n >= _SAME_SHARE * sightings[track]:
            named[track] = kind
    if not named:
        return frames
    dropped = {pair for track in named for pair in covered[track]}
    return [(index, t, [replace(d, category=named[d.track_id]) if d.track_id in named else d
                        for d in ds if (index, d.track_id) not in dropped])
            for index, t, ds in frames]
