"""What tracked people do, over time: actions read from body keypoints and the objects at hand.

DoraemonGPT keeps an action for every tracked instance (from a video model); offline we have a
pose model and an object detector, so actions are rules over what those measured, each one
stated in docs/PERCEPTION.md ("Actions") and its precision measured by `bench actions`:

- the body alone: standing, sitting, bending, lying (the pose model's posture); walking and
  running (how fast the foot point moves, in body heights a second, the camera's own motion
  taken out); jumping (feet and hips rise together and come down); falling (upright, then lying
  within two seconds); sitting down and standing up (one posture on two readings, then the
  other on two); turning round (facing the camera, then the back, or the reverse); raising
  arms and waving (a wrist above the shoulder, moving sideways); punching (a wrist thrown out to
  an extended arm at shoulder height); climbing (rising steadily without getting smaller);
  dancing (limbs moving fast around a body that stays put); touching the face (a hand at the face
  for a second: make-up, shaving, wiping, a chin on a hand); upside down (hips over the
  shoulders, feet over the hips: the body inverted, for a moment at least);
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

This module gathers the sightings and turns the rules' frames into intervals; the rules live
beside it, a module a family: `action_body_rules`, `action_object_rules` and `action_pair_rules`,
all reading the records and geometry of `action_sightings`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from backend.ingest.action_body_rules import (EDGE, PictureMotion, body_actions,
                                              climbs_readable, cut_top_or_bottom, foot_speed)
from backend.ingest.action_object_rules import parked, with_object
from backend.ingest.action_pair_rules import between_people
from backend.ingest.action_sightings import Seen, Support, Thing, Track, sighting
from backend.ingest.tracks import Frame
from models.motion import CATEGORY as MOVING
from models.types import FrameLook

# What a video's `models` says read its actions.
RULES = "rules over pose keypoints and object boxes (backend/ingest/actions.py)"
# Every action the rules can state, in the words the table stores, by family.
BODY = ("standing", "walking", "running", "sitting", "lying", "bending", "jumping", "falling",
        "sitting down", "standing up", "turning round", "raising arms", "waving", "punching",
        "pointing", "climbing", "dancing", "touching the face", "upside down")
WITH_OBJECTS = ("holding", "carrying", "riding", "drinking", "eating", "using a phone",
                "swinging", "throwing")
BETWEEN_PEOPLE = ("facing each other", "hands joined", "hugging", "pushing", "fighting",
                  "passing a ball")
ACTIONS = BODY + WITH_OBJECTS + BETWEEN_PEOPLE
# How a body is held rather than what it does: the pose model's reading of every frame.
POSTURES = ("standing", "sitting", "lying", "bending")

# Events last a moment: one supporting frame is an interval. States need two (or the whole
# track, for a still image).
# Upside down is one too: the pose model fits an upright skeleton to most frames of an inverted
# body (it learnt people standing), so a moment is all it shows of one.
EVENTS = {"jumping", "falling", "sitting down", "standing up", "turning round", "punching",
          "throwing", "passing a ball", "upside down", "pushing"}

BRIDGE = 1.0                # seconds of no support bridged inside one interval
# States that a moment says nothing of: a wrist swung past the face in a strike, an aim or a
# throw is at it for a frame or two, and arms fly about for a second in many sports. Chosen on
# the tuning half of the labelled action clips (docs/PERCEPTION.md): the shorter runs there were
# never what the clip's label said; a single image is still read as it is. A walk or a run is
# a stride at least (two steps, about a second): a shorter one is a body shifting its weight
# where it stands, or a box that grew as an arm reached out. An arm pointed is held most of a
# second: pointers there held it 0.6-0.8 s too, but at 0.6 an archer's aim became pointing.
LASTS = {"touching the face": 1.0, "dancing": 2.0, "walking": 1.0, "running": 1.0,
         "pointing": 0.8}
# A person whose track the clip's start or end or the picture's edge cuts off may be seen for
# less than a stride: someone already walking out of the picture when the clip begins. A walk
# or a run that holds on every one of at least CUT_SEEN sightings of such a track is kept
# however short; a weight shift is no walk on every sighting of a track.
CUT_SHORT = {"walking", "running"}
CUT_SEEN = 3


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


def perceive(frames: list[Frame], size: tuple[int, int],
             looks: list[FrameLook] | tuple = ()) -> list[Action]:
    """Every action of every tracked person, as scored intervals."""
    people: dict[int, list[Seen]] = defaultdict(list)
    things: dict[int, list[Thing]] = defaultdict(list)   # frame -> objects in it
    on_frame: dict[int, dict[int, Seen]] = defaultdict(dict)
    for index, t, detections in frames:
        for d in detections:
            if d.category == "person":
                seen = sighting(index, t, d)
                people[d.track_id].append(seen)
                on_frame[index][d.track_id] = seen
            elif d.category != MOVING and d.confidence > 0:
                things[index].append(Thing(d.track_id, d.category, d.box))
    pan = PictureMotion(looks, size)
    support: dict[tuple[int, str, int | None], Support] = defaultdict(Support)

    def mark(pid: int, action: str, t: float, note: str, other: int | None = None) -> None:
        s = support[(pid, action, other)]
        s.times.append(t)
        s.note = s.note or note

    people = {pid: Track(sightings) for pid, sightings in people.items()}
    still = parked(things, {index: t for index, t, _ in frames}, pan)
    climbs = climbs_readable(people, size[1])
    speeds: dict[tuple[int, float], float | None] = {}
    for pid, track in people.items():
        speeds.update({(pid, s.t): foot_speed(track, k, pan) for k, s in enumerate(track)})
    for pid, track in people.items():
        riding_times = set()
        # A filled-in box was not seen: it holds and rides nothing, as it walks nowhere.
        for s in (s for s in track if not s.interpolated):
            for thing in things.get(s.frame, ()):
                for action, note in with_object(s, thing):
                    if action == "riding" and (s.frame, thing.instance_id) in still:
                        continue
                    mark(pid, action, s.t, note, thing.instance_id)
                    if action == "riding":
                        riding_times.add(s.t)
        body_actions(pid, track, speeds, pan, riding_times, support, mark, size[1], climbs)
    # The punches the body rules marked: fights and pushes read them, not a second reading.
    struck = {pid: set(support[(pid, "punching", None)].times) for pid in people}
    between_people(on_frame, things, speeds, struck, mark)
    span = (frames[0][1], frames[-1][1]) if frames else (0.0, 0.0)
    return _intervals(support, people, {pid for pid, track in people.items()
                                        if _cut_off(track, span, size)})


def _cut_off(track: Track, span: tuple[float, float], size: tuple[int, int]) -> bool:
    """Whether the clip's start or end, or the picture's edge, cuts the track off."""
    width, height = size
    first, last = track[0], track[-1]

    def at_edge(box) -> bool:
        return (box[0] <= EDGE * width or box[2] >= (1 - EDGE) * width
                or cut_top_or_bottom(box, height))
    return (first.t <= span[0] + 1e-6 or last.t >= span[1] - 1e-6
            or at_edge(first.box) or at_edge(last.box))


def _intervals(support: dict[tuple[int, str, int | None], Support],
               people: dict[int, list[Seen]], cut_off: set[int]) -> list[Action]:
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
            whole = (pid in cut_off and action in CUT_SHORT
                     and len(run) == len(seen_at) >= CUT_SEEN)
            if len(run) >= needed and (run[-1] - run[0] >= LASTS.get(action, 0.0) - 1e-6
                                       or len(seen_at) == 1 or whole):
                frames = [x for x in seen_at if run[0] - 1e-6 <= x <= run[-1] + 1e-6] or run
                score = min(1.0, len(run) / len(frames))
                out.append(Action(pid, action, run[0], run[-1], score,
                                  f"{held.note} ({len(run)} of {len(frames)} frames)", other))
            run = [t]
    out.sort(key=lambda a: (a.t_start, a.instance_id, a.action))
    return out

