"""`bench appearance`: colours against what people wrote, positions and directions against truth.

Colours: the COCO images' five human captions name colours of things ("a man in a blue shirt",
"a red double decker bus"). Each colour word followed, within a few words, by a garment
(person, upper or lower body) or by a word for a kind (`kinds.words`) is a truth item where the
image holds that kind: the largest person the pose model finds, the largest true box of the
kind otherwise. The colour measured there (`ingest.colours`), which may be none where the
evidence is unclear, is scored per colour word and per body part: precision over the colours
stated, coverage as the share of truth items given one. With and without a correction of the
light. Images are split by name into halves (`actions_bench.halves`); choices were made on the
first only.

Labelled colours (`--colour-set`): a manifest of images whose public dataset names each
person's upper- and lower-body colours (PETA's pedestrian crops) or a vehicle's colour, kept
outside this repo. Each crop shows a single pedestrian or vehicle: the pedestrian's parts by
pose where the model finds them (else the crop's upper and lower middle), a vehicle's colour
from the crop's middle. Halves alternate within each dataset, in name order. Each labelled
colour is also asked as five-option questions and decided as the agent decides them, with and
without the pixels' shares (`choice_figures`).

Positions and directions: on every sampled frame of each MOT scene the tracker's boxes are
matched to the true ones (IoU >= 0.5); each match is a track-time whose third of the picture
(`places.third`), distance from the camera (`places.distance`) and direction over the second
around it (`describe.motion`) are compared with the true box's; each pair of matches on one
frame, whose relations (`places.relations`: left of, in front of, next to ...) are compared with
their true boxes'; each track, whether it moved over its life or stayed in place
(`describe.moves`), against its true person's boxes on those frames; and the action rules run
on the tracked people, each walking or standing interval against how far its true person went
(`doings_agree`).
"""

from __future__ import annotations

import csv
import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from PIL import Image

from backend import kinds
from backend.agent import option_match
from backend.agent.option_match import COLOUR_WORDS
from backend.evaluation.actions_bench import halves
from backend.ingest import colours, describe
from backend.ingest.describe import GARMENTS

# A caption's words between a colour and its noun ('a red double decker bus'); a word that
# starts a phrase of its own ends the search ('green lights at cars').
_GAP = 3
_STOPS = {"and", "or", ",", ".", "at", "on", "in", "with", "of", "to", "by", "near", "next",
          "from", "is", "are"}
# Captions' colour words that the namer has no term of its own for.
_SAME = {"silver": "grey"}


def caption_colours(caption: str) -> list[tuple[str, str]]:
    """[(target, colour)]: target 'person top', 'person bottom' or a kind. A noun with two
    colours ('a red and white bus') says no one colour of it, and is left out; so is a
    person's own colour ('a black woman'), which is no garment's."""
    words = re.findall(r"[a-z]+|[,.]", caption.lower())
    found = []
    for k, word in enumerate(words):
        colour = COLOUR_WORDS.get(word)
        if colour is None or (k + 1 < len(words) and f"{word} {words[k + 1]}" in COLOUR_WORDS) \
                or (k > 1 and words[k - 1] == "and" and words[k - 2] in COLOUR_WORDS):
            continue
        if k > 0 and f"{words[k - 1]} {word}" in COLOUR_WORDS:
            colour = COLOUR_WORDS[f"{words[k - 1]} {word}"]
        for later in words[k + 1:k + 2 + _GAP]:
            if later in COLOUR_WORDS or later in _STOPS:
                break
            target = (f"person {GARMENTS[later]}" if later in GARMENTS and later not in
                      ("top", "tops", "bottom", "bottoms") else kinds.words().get(later))
            if target == "person":
                break
            if target:
                found.append((target, _SAME.get(colour, colour)))
                break
    return found


def _truth_boxes(labels: Path, classes: list[str], size: tuple[int, int]) -> dict[str, list]:
    w, h = size
    boxes = defaultdict(list)
    for line in labels.read_text().splitlines() if labels.is_file() else []:
        c, cx, cy, bw, bh = (float(v) for v in line.split())
        boxes[classes[int(c)]].append(((cx - bw / 2) * w, (cy - bh / 2) * h,
                                       (cx + bw / 2) * w, (cy + bh / 2) * h))
    return boxes


def _area(box) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


# What `measured` gives where the thing is found but no colour is stated (`colours.dominant`).
UNSTATED = ""


def measured(image: np.ndarray, target: str, boxes: dict[str, list], people: list) -> str | None:
    """The colour named for a target, UNSTATED where it is unclear, None where the image holds
    no such thing."""
    if target.startswith("person "):
        if not people:
            return None
        person = max(people, key=lambda d: _area(d.box))
        keypoints = person.pose.keypoints if person.pose is not None else None
        upper, lower = colours.person_colours(image, person.box, keypoints)
        reading = upper if target.endswith("top") else lower
    else:
        if not boxes.get(target):
            return None
        reading = colours.object_colour(image, max(boxes[target], key=_area))
    return UNSTATED if reading is None or reading.rgb is None else colours.colour_name(reading.rgb)


def _balanced(image: np.ndarray) -> np.ndarray:
    return np.clip(image * colours.grey_world(image), 0, 255).astype(np.uint8)


def _white_patch(image: np.ndarray) -> np.ndarray:
    return np.clip(image * colours.white_patch(image), 0, 255).astype(np.uint8)


LIGHT = {"as shot": lambda image: image, "grey world": _balanced, "white patch": _white_patch}


def colour_bench(root: Path, models, limit: int = 0, progress=lambda line: None) -> dict:
    folder = root / "coco_val2017_first128"
    captions = json.loads((folder / "captions.json").read_text())
    classes = (folder / "classes.txt").read_text().split("\n")
    names = sorted(captions)[:limit] if limit else sorted(captions)
    half = halves(list(captions))
    items = []
    for n, name in enumerate(names, start=1):
        truth = defaultdict(set)
        for caption in captions[name]:
            for target, colour in caption_colours(caption):
                truth[target].add(colour)
        if not truth:
            continue
        image = np.asarray(Image.open(folder / "images" / name).convert("RGB"))
        boxes = _truth_boxes(folder / "labels" / f"{Path(name).stem}.txt", classes,
                             (image.shape[1], image.shape[0]))
        people = _people(models, image)
        for light, correct in LIGHT.items():
            seen = correct(image)
            for target, said in truth.items():
                name_found = measured(seen, target, boxes, people)
                if name_found is not None:
                    items.append({"image": name, "half": half[name], "light": light,
                                  "target": target, "truth": sorted(said), "measured": name_found})
        progress(f"{n}/{len(names)} {name}: {dict(truth)}")
    return {"source": str(folder), "items": items,
            "figures": {h: {light: colour_figures([i for i in items if i["half"] == h
                                                    and i["light"] == light])
                            for light in LIGHT} for h in ("tune", "report")}}


# The namer's terms that a labelled set folds into its own broader ones (PETA and the vehicle
# set name no navy or teal).
_FOLDS = {"navy": ("blue",), "teal": ("green", "blue")}
_PARTS = {"upper": "person top", "lower": "person bottom"}


def labelled_bench(manifest: Path, models, progress=lambda line: None) -> dict:
    """Colours named on a labelled set (file, part, colour, dataset, ...): per half and light,
    `colour_figures`; per dataset, the default light's."""
    truth: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    dataset = {}
    with manifest.open(newline="") as f:
        for row in csv.DictReader(f):
            truth[row["file"]][_PARTS.get(row["part"], row["part"])].add(
                _SAME.get(row["colour"], row["colour"]))
            dataset[row["file"]] = row["dataset"]
    half = _alternating(dataset)
    items = []
    for n, (file, parts) in enumerate(sorted(truth.items()), start=1):
        image = np.asarray(Image.open(manifest.parent / file).convert("RGB"))
        whole = (0.0, 0.0, float(image.shape[1]), float(image.shape[0]))
        pedestrian = bool(set(parts) & set(_PARTS.values()))
        people = _people(models, image) if pedestrian else []
        person = max(people, key=lambda d: _area(d.box)) if people else None
        keypoints = person.pose.keypoints if person is not None and person.pose is not None \
            else None
        for light, correct in LIGHT.items():
            seen = correct(image)
            clothes = colours.person_colours(seen, person.box if person else whole, keypoints) \
                if pedestrian else None
            for target, said in parts.items():
                reading = clothes[target != "person top"] if target.startswith("person ") \
                    else colours.object_colour(seen, whole)
                name = UNSTATED if reading is None or reading.rgb is None \
                    else colours.colour_name(reading.rgb)
                items.append({"image": file, "half": half[file], "light": light,
                              "dataset": dataset[file], "target": target, "posed": keypoints
                              is not None, "truth": sorted(said), "measured": _folded(name, said),
                              "stated": name, "shares": _stored_shares(reading)})
        progress(f"{n}/{len(truth)} {file}: {dict(parts)}")
    return {"source": str(manifest), "items": items,
            "figures": {h: {light: colour_figures([i for i in items if i["half"] == h
                                                    and i["light"] == light])
                            for light in LIGHT} for h in ("tune", "report")},
            "choices": {h: choice_figures([i for i in items if i["half"] == h
                                           and i["light"] == "white patch"])
                        for h in ("tune", "report")},
            "by_dataset": {d: _shares(_tallied([i for i in items if i["dataset"] == d
                                                and i["light"] == "white patch"]))
                           for d in sorted(set(dataset.values()))}}


def _stored_shares(reading) -> dict[str, float]:
    """The pixels' shares as the agent reads them: through the text ingest stores."""
    if reading is None:
        return {}
    return describe.shares(describe.colour_shares("thing", reading, None))


# Each labelled colour is asked as a multiple-choice question would ask it: the colour among four
# the label does not name, drawn from the eleven basic colour terms; this many draws of the four,
# fixed by the image's name.
CHOICE_DRAWS = 5
_BASIC = ("black", "blue", "brown", "green", "grey", "orange", "pink", "purple", "red", "white",
          "yellow")


def choice_figures(items: list[dict]) -> dict:
    """Each labelled colour as five-option questions, decided as the agent decides them
    (`option_match.decide`) from the colour measured alone and with the pixels' shares too:
    right, wrong and left open, and the share right where the options left open are guessed
    among evenly (a model at chance)."""
    ways = {"colour alone": lambda item: {"colours": [item["stated"]] if item["stated"] else []},
            "with shares": lambda item: {"colours": [item["stated"]] if item["stated"] else [],
                                         "shares": item["shares"]}}
    figures = {}
    for way, typed in ways.items():
        tally = {"questions": 0, "right": 0, "wrong": 0, "open": 0, "expected": 0.0}
        for item in items:
            for colour in item["truth"]:
                draw = random.Random(f"{item['image']} {item['target']} {colour}")
                for _ in range(CHOICE_DRAWS):
                    options = draw.sample([c for c in _BASIC if c not in item["truth"]], 4)
                    options.insert(draw.randrange(5), colour)
                    decision = option_match.decide(typed(item), options)
                    chosen = None if decision is None else decision.chosen
                    left = (decision.supported if decision is not None else []) \
                        or list(range(len(options)))
                    answer = options.index(colour)
                    tally["questions"] += 1
                    if chosen is None:
                        tally["open"] += 1
                        tally["expected"] += (answer in left) / len(left)
                    else:
                        tally["right" if chosen == answer else "wrong"] += 1
                        tally["expected"] += chosen == answer
        n = tally["questions"]
        figures[way] = {**tally, "expected": round(tally["expected"] / n, 3) if n else None}
    return figures


def _people(models, image: np.ndarray) -> list:
    """The people the pose tracker finds in one still image (its track state reset first)."""
    models.tracker.reset()
    return [d for d in models.tracker.track(image) if d.category == "person"]


def _alternating(dataset: dict[str, str]) -> dict[str, str]:
    """Tuning and reporting halves taken in turn within each dataset, in name order."""
    half = {}
    for name in sorted(set(dataset.values())):
        for k, file in enumerate(sorted(f for f, d in dataset.items() if d == name)):
            half[file] = "tune" if k % 2 == 0 else "report"
    return half


def _folded(name: str, truth: set) -> str:
    folds = _FOLDS.get(name)
    return name if not folds else next((f for f in folds if f in truth), folds[0])


def colour_figures(items: list[dict]) -> dict:
    """Precision (right of stated) and coverage (stated of items): overall, per colour the
    captions say and per body part; and precision per colour named."""
    named = defaultdict(lambda: {"stated": 0, "right": 0})
    said = defaultdict(_tally)
    parts = defaultdict(_tally)
    for item in items:
        stated = item["measured"] != UNSTATED
        right = item["measured"] in item["truth"]
        if stated:
            named[item["measured"]]["stated"] += 1
            named[item["measured"]]["right"] += right
        for colour in item["truth"]:
            _count(said[colour], stated, item["measured"] == colour)
        part = item["target"].split(" ", 1)[1] if item["target"].startswith("person ") else "object"
        _count(parts[part], stated, right)
    return {**_shares(_tallied(items)),
            "by_colour": {c: {**v, "precision": round(v["right"] / v["stated"], 3)}
                          for c, v in sorted(named.items())},
            "by_said": {c: _shares(v) for c, v in sorted(said.items())},
            "by_part": {p: _shares(v) for p, v in sorted(parts.items())}}


def _tallied(items: list[dict]) -> dict:
    total = _tally()
    for item in items:
        _count(total, item["measured"] != UNSTATED, item["measured"] in item["truth"])
    return total


def _tally() -> dict:
    return {"items": 0, "stated": 0, "right": 0}


def _count(tally: dict, stated: bool, right: bool) -> None:
    tally["items"] += 1
    tally["stated"] += stated
    tally["right"] += right


def _shares(tally: dict) -> dict:
    return {**tally,
            "precision": round(tally["right"] / tally["stated"], 3) if tally["stated"] else None,
            "coverage": round(tally["stated"] / tally["items"], 3) if tally["items"] else None}


# The time either side of a track-time over which its direction is read, in seconds.
_DIRECTION_SPAN = 1.0


def places_bench(sequences: list, models, settings, progress=lambda line: None) -> dict:
    """Place and direction of each tracked box matched to a true one, against the true box's."""
    from backend.evaluation import scenes

    half = scenes.halves(sequences)
    runs = []
    for sequence in sequences:
        pairs, frames = _matched(sequence, models, settings)
        runs.append({"sequence": sequence.name, "half": half[sequence.name],
                     **agreement(pairs), **doings_agree(pairs, frames)})
        progress(f"{sequence.name}: {runs[-1]}")
    return {"scenes": runs, "halves": {h: _pooled([r for r in runs if r["half"] == h])
                                       for h in ("tune", "report")}}


def _matched(sequence, models, settings) -> tuple[list[tuple[int, float, tuple, tuple, tuple, int]],
                                                 list]:
    """(truth id, t, true box, tracked box, frame size, track id) of every tracked box on a
    sampled frame that overlaps a true one (IoU >= 0.5); and the tracked people frame by frame
    (index, t, detections), for the action rules."""
    from backend.evaluation import tracking
    from backend.ingest import decode

    truth = tracking.read_ground_truth(sequence)
    meta = decode.probe(sequence.video)
    models.tracker.reset()
    pairs, frames = [], []
    for index, t, frame in decode.iter_frames(sequence.video, meta,
                                              decode.sample_indices(meta, settings.track_fps)):
        people = [d for d in models.tracker.track(frame) if d.category == "person"]
        frames.append((index, t, people))
        seen = [(d.track_id, d.box) for d in people]
        here = truth.get(round(index / meta.fps * sequence.fps), [])
        distances = tracking._distances(here, seen)
        for (gt_id, gt_box), (track, box) in tracking._best_matches(here, seen, distances):
            pairs.append((gt_id, t, gt_box, box, (meta.width, meta.height), track))
    return pairs, frames


def _point(t: float, box, size):
    from backend.ingest.describe import TrackPoint

    w, h = size
    return TrackPoint(t, (box[0] + box[2]) / 2 / w, (box[1] + box[3]) / 2 / h,
                      (box[3] - box[1]) / h, w=(box[2] - box[0]) / w)


def agreement(pairs: list) -> dict:
    """How often the tracked box's third of the picture, its distance from the camera, and its
    direction over the second either side, are the true box's; directions judged where both
    boxes are matched at least twice in that span."""
    from backend.ingest.describe import motion, where
    from backend.places import distance

    by_id = defaultdict(list)
    for gt_id, t, gt_box, box, size, _ in pairs:
        by_id[gt_id].append((t, gt_box, box, size))
    places = distances = directions = judged = 0
    for gt_id, t, gt_box, box, size, _ in pairs:
        seen, true = _point(t, box, size), _point(t, gt_box, size)
        places += where(seen) == where(true)
        distances += distance(seen.h, seen.w) == distance(true.h, true.w)
        near = [p for p in by_id[gt_id] if abs(p[0] - t) <= _DIRECTION_SPAN]
        if len(near) >= 2:
            judged += 1
            directions += (motion([_point(s, b, z) for s, _, b, z in near]) ==
                           motion([_point(s, g, z) for s, g, _, z in near]))
    paired, related = _relations_agree(pairs)
    return {**_states_agree(pairs),
            "matched": len(pairs), "place_right": places, "distance_right": distances,
            "directions_judged": judged, "direction_right": directions, "pairs": paired,
            "relation_right": related,
            "place_agrees": round(places / len(pairs), 3) if pairs else None,
            "distance_agrees": round(distances / len(pairs), 3) if pairs else None,
            "direction_agrees": round(directions / judged, 3) if judged else None,
            "relation_agrees": round(related / paired, 3) if paired else None}


def _states_agree(pairs: list) -> dict:
    """Whether each track moved over its life or stayed in place (`describe.moves`, what "are
    the cars parked" is answered from), from its tracked boxes against the boxes of the true
    person it matched most, on those frames: how many tracks were said to keep still or to
    move, and how many of those the truth agrees with."""
    from backend.ingest.describe import motion, moves

    by_track = defaultdict(list)
    for gt_id, t, gt_box, box, size, track in pairs:
        by_track[track].append((gt_id, t, gt_box, box, size))
    said = {"still": 0, "moving": 0}
    right = {"still": 0, "moving": 0}
    for seen in by_track.values():
        person = Counter(p[0] for p in seen).most_common(1)[0][0]
        mine = [p for p in seen if p[0] == person]
        tracked = moves(motion([_point(t, b, z) for _, t, _, b, z in mine]))
        true = moves(motion([_point(t, g, z) for _, t, g, _, z in mine]))
        if tracked is None or true is None:
            continue
        state = "moving" if tracked else "still"
        said[state] += 1
        right[state] += tracked == true
    return {"still_said": said["still"], "still_right": right["still"],
            "moving_said": said["moving"], "moving_right": right["moving"],
            **_state_shares(said, right)}


def doings_agree(pairs: list, frames: list) -> dict:
    """The action rules (`actions.perceive`) on the tracker's people, against MOT truth: each
    walking or standing interval of a track against how far its true person's foot point went
    over it (a walk is right where it went WALKED body heights a second or more, a stand where
    it went less than the rules' walking speed); and of the tracks whose true person moved over
    the frames matched (`describe.moves`), how many were read walking or running. The camera's
    motion is left in both, so a moving camera's scenes are judged as the picture shows them."""
    from backend.ingest import actions
    from backend.ingest.action_body_rules import WALK
    from backend.ingest.describe import motion, moves

    if not pairs:
        return _doings(Counter(), Counter(), 0, 0)
    size = pairs[0][4]
    by_track = defaultdict(list)
    for gt_id, t, gt_box, _, _, track in pairs:
        by_track[track].append((t, gt_id, gt_box))
    acted = defaultdict(set)
    said, right = Counter(), Counter()
    for act in actions.perceive(frames, size):
        if act.action not in ("walking", "running", "standing"):
            continue
        acted[act.instance_id].add(act.action)
        inside = [m for m in by_track.get(act.instance_id, ())
                  if act.t_start - 1e-6 <= m[0] <= act.t_end + 1e-6]
        if not inside:
            continue
        person = Counter(m[1] for m in inside).most_common(1)[0][0]
        mine = [(t, box) for t, gt_id, box in inside if gt_id == person]
        if len(mine) < 2 or mine[-1][0] - mine[0][0] < 0.5:
            continue
        speed = _foot_speed(mine)
        state = "standing" if act.action == "standing" else "walking"
        said[state] += 1
        right[state] += speed >= WALKED if state == "walking" else speed < WALK
    movers = walkers = 0
    for track, matched in by_track.items():
        person = Counter(m[1] for m in matched).most_common(1)[0][0]
        if moves(motion([_point(t, box, size) for t, gt_id, box in matched if gt_id == person])):
            movers += 1
            walkers += bool(acted[track] & {"walking", "running"})
    return _doings(said, right, movers, walkers)


# A true person who went this far (body heights a second) over an interval read walking was on
# the move: slow walkers in a crowd seen from above go 0.15-0.3.
WALKED = 0.1


def _foot_speed(seen: list[tuple[float, tuple]]) -> float:
    """How fast a box's foot point went from its first to its last sighting, body heights a
    second."""
    (t0, a), (t1, b) = seen[0], seen[-1]
    moved = np.hypot((b[0] + b[2] - a[0] - a[2]) / 2, b[3] - a[3])
    return float(moved / (t1 - t0) / np.median([box[3] - box[1] for _, box in seen]))


def _doings(said: Counter, right: Counter, movers: int, walkers: int) -> dict:
    return {"walking_said": said["walking"], "walking_right": right["walking"],
            "standing_said": said["standing"], "standing_right": right["standing"],
            "movers": movers, "movers_walking": walkers}


def _state_shares(said: dict, right: dict) -> dict:
    return {f"{state}_precision": round(right[state] / said[state], 3) if said[state] else None
            for state in said}


def _relations_agree(pairs: list) -> tuple[int, int]:
    """(pairs of people seen on one frame, pairs whose relations from the tracked boxes are
    exactly those of their true boxes: left or right, in front or behind, next to, on, above or
    below)."""
    from backend.places import relations

    by_time = defaultdict(list)
    for _, t, gt_box, box, _, _ in pairs:
        by_time[t].append((gt_box, box))
    paired = related = 0
    for seen in by_time.values():
        for k, (gt_a, a) in enumerate(seen):
            for gt_b, b in seen[k + 1:]:
                paired += 1
                related += relations(a, b) == relations(gt_a, gt_b)
    return paired, related


def _pooled(runs: list[dict]) -> dict:
    matched = sum(r["matched"] for r in runs)
    judged = sum(r["directions_judged"] for r in runs)
    paired = sum(r["pairs"] for r in runs)
    places = sum(r["place_right"] for r in runs)
    distances = sum(r["distance_right"] for r in runs)
    directions = sum(r["direction_right"] for r in runs)
    related = sum(r["relation_right"] for r in runs)
    said = {state: sum(r[f"{state}_said"] for r in runs) for state in ("still", "moving")}
    right = {state: sum(r[f"{state}_right"] for r in runs) for state in ("still", "moving")}
    doings = {key: sum(r[key] for r in runs) for key in _doings(Counter(), Counter(), 0, 0)}
    return {**doings, **{f"{state}_said": n for state, n in said.items()},
            **{f"{state}_right": n for state, n in right.items()}, **_state_shares(said, right),
            "matched": matched, "directions_judged": judged, "pairs": paired,
            "place_agrees": round(places / matched, 3) if matched else None,
            "distance_agrees": round(distances / matched, 3) if matched else None,
            "direction_agrees": round(directions / judged, 3) if judged else None,
            "relation_agrees": round(related / paired, 3) if paired else None}
