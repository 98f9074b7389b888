"""`bench actions`: the actions, tags and picture facts ingest reads, against human captions.

Truth nobody here wrote: the five human captions of each of the first 128 COCO val2017 images
(`captions.json`). An action is true of an image where at least one caption says it ("a man
riding a horse", "two women sitting on a bench"); a tag where a caption names it or a kind of it
(through WordNet: a caption's "bird" is true of the tag "cockatoo", never the reverse); indoors or
outdoors where a caption names a place that is one or the other ("kitchen", "street").

Every image runs through ingest's own models as one frame of a video: the person detector with
its keypoints, the object detector, the tagger and the picture facts, then
`actions.perceive`, so what is measured is what a video gets. Captions leave things out (a man
standing with a surfboard is "a man with a surfboard"), so precision here is a lower bound: a
stated action no caption mentions counts as wrong.

Images are split by name into two halves: rules were tuned on the first only (`tune`), and the
second (`report`) is what the README quotes.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
from PIL import Image

from backend.ingest import actions, objects, picture_facts

# Caption words that state an action. An action no caption can be expected to say (turning
# round, an event of a moment) has no row: a still image cannot show it.
CAPTION_WORDS = {
    "standing": r"\b(?:stand|stands|standing|stood)\b",
    "sitting": r"\b(?:sit|sits|sitting|sat|seated)\b",
    "lying": r"\b(?:lying|lies|lay|lays|laying)\b",
    "bending": r"\b(?:bend|bends|bending|bent|leaning|leans)\b",
    "walking": r"\b(?:walk|walks|walking|walked)\b",
    "running": r"\b(?:run|runs|running|ran|jogging|jogs)\b",
    "jumping": r"\b(?:jump|jumps|jumping|leaps?|leaping)\b",
    "raising arms": r"\b(?:raise[sd]?|raising|arms? up|hands? up|reach(?:es|ing)? up)\b",
    "holding": r"\b(?:hold|holds|holding|held|holds up)\b",
    "carrying": r"\b(?:carry|carries|carrying|carried)\b",
    "riding": r"\b(?:ride|rides|riding|rode|rider|riders)\b",
    "drinking": r"\b(?:drink|drinks|drinking|sip|sips|sipping)\b",
    "eating": r"\b(?:eat|eats|eating|ate|bites?|biting)\b",
    "using a phone": r"\b(?:on (?:a|the|his|her) (?:cell )?phone|talking on|texting|(?:cell ?)?phone)\b",
    "swinging": r"\b(?:swing|swings|swinging|swung)\b",
    "throwing": r"\b(?:throw|throws|throwing|threw|toss|tosses|tossing)\b",
    # A hand at the face is what these show; captions name the act, not the hand.
    "touching the face": r"\b(?:brush\w* (?:his|her|their) teeth|shav(?:e|es|ing)|make-?up|"
                         r"lipstick|(?:talking|speaks|speaking) on (?:a|the|his|her) (?:cell ?)?phone|"
                         r"(?:hand|hands|fingers?) (?:on|to|over) (?:his|her|their) "
                         r"(?:face|mouth|chin|cheek|eyes?))\b",
    "upside down": r"\b(?:upside[- ]down|inverted|(?:hand|head)stands?|cartwheels?|somersaults?)\b",
    "pointing": r"\b(?:points|pointing|pointed) (?:at|to|towards?|up|out)\b",
    "hugging": r"\b(?:hug|hugs|hugging|embrac\w+)\b",
    "hands joined": r"\b(?:holding hands|hand in hand|shak\w+ hands)\b",
    "facing each other": r"\b(?:facing each other|face each other|talking to each other|"
                         r"looking at each other)\b",
}
INDOORS = r"\b(?:kitchen|bedroom|bathroom|living room|room|office|restaurant|hotel|indoors?|" \
          r"inside|counter|toilet|sink|bed|couch|sofa|desk|table|shelf|shelves|store|shop|" \
          r"library|classroom|hallway|lobby|refrigerator|fridge|oven)\b"
OUTDOORS = r"\b(?:street|road|field|beach|ocean|sea|lake|river|park|sky|outdoors?|outside|" \
           r"grass|grassy|snow|mountain|hill|sidewalk|yard|forest|woods|zoo|runway|airport|" \
           r"parking|highway|intersection|city|town|waves?|surf|pasture|farm|dirt)\b"


GREY = r"\b(?:black and white|black-and-white|monochrome|gr[ae]yscale|sepia)\b"
DRAWN = r"\b(?:cartoon|drawing|drawn|illustration|painting|animated|animation)\b"


def halves(names: list[str]) -> dict[str, str]:
    ordered = sorted(names)
    return {name: "tune" if k < len(ordered) / 2 else "report" for k, name in enumerate(ordered)}


# A caption's action counts for people only where it speaks of one ("a cat sitting on a
# couch" says nothing of what people do).
PERSON = r"\b(?:man|men|woman|women|person|people|persons|boy|girl|child|children|kids?|guy|" \
         r"lady|ladies|player|skier|surfer|skateboarder|snowboarder|rider|biker|cyclist|" \
         r"someone|couple|family|crowd|baby|toddler|teen|teenager|adult|he|she|they|" \
         r"chef|cook|batter|pitcher|catcher|officer|student|worker|tourist)s?\b"


def truth_of(captions: list[str]) -> tuple[set[str], str | None]:
    """(actions some caption about people states, 'indoors'/'outdoors'/None by the places
    captions name)."""
    text = " ".join(captions).lower()
    about_people = " ".join(c for c in captions if re.search(PERSON, c.lower())).lower()
    stated = {a for a, pattern in CAPTION_WORDS.items() if re.search(pattern, about_people)}
    inside = len(re.findall(INDOORS, text))
    outside = len(re.findall(OUTDOORS, text))
    place = "indoors" if inside > outside else "outdoors" if outside > inside else None
    return stated, place


def _tag_true(tag, captions: list[str]) -> bool:
    from models import lexicon

    words = set(re.findall(r"[a-z]+(?: [a-z]+)?", " ".join(captions).lower()))
    names = lexicon.lemma_words(tag.wnid) | lexicon.broader_words(tag.wnid)
    return bool(words & names) or any(lexicon.phrase_link(c, tag.label) > 0 for c in captions)


def perceive_image(image: np.ndarray, models) -> tuple[list[actions.Action], list, list, dict]:
    """The image as one frame of a video: people with keypoints, objects, actions, tags, place
    tags and the picture's facts."""
    models.tracker.reset()
    people = models.tracker.track(image)
    things = []
    if models.objects is not None:
        models.objects.reset()
        things = [replace(d, track_id=d.track_id + objects.OBJECT_IDS)
                  for d in models.objects.track(image)]
    detections = people + things
    found = actions.perceive([(0, 0.0, detections)], (image.shape[1], image.shape[0]))
    tags = models.tagger.tags([image])[0] if models.tagger is not None else []
    places = models.places.tags([image])[0] if models.places is not None else []
    facts = picture_facts.shot_facts([picture_facts.measure(image)], tags + places,
                                     {d.category for d in detections})
    return found, tags, places, facts


def actions_bench(root: Path, models, limit: int = 0, progress=lambda line: None) -> dict:
    folder = root / "coco_val2017_first128"
    captions = json.loads((folder / "captions.json").read_text())
    names = sorted(captions)[:limit] if limit else sorted(captions)
    half = halves(list(captions))
    tally = {h: {"actions": defaultdict(lambda: {"tp": 0, "predicted": 0, "true": 0}),
                 "tags": defaultdict(lambda: {"right": 0, "of": 0}),
                 "scenes": defaultdict(lambda: {"right": 0, "of": 0}),
                 # whole-picture facts: indoors, outdoors, black and white, animation
                 "places": defaultdict(lambda: {"right": 0, "of": 0, "true": 0})}
             for h in ("tune", "report")}
    for n, name in enumerate(names, start=1):
        image = np.asarray(Image.open(folder / "images" / name).convert("RGB"))
        found, tags, places, facts = perceive_image(image, models)
        stated, place = truth_of(captions[name])
        said = {a.action for a in found}
        t = tally[half[name]]
        for action in CAPTION_WORDS:
            row = t["actions"][action]
            row["predicted"] += action in said
            row["true"] += action in stated
            row["tp"] += action in said and action in stated
        for table, found_tags in (("tags", tags), ("scenes", places)):
            if found_tags:
                cell = t[table][found_tags[0].label]
                cell["of"] += 1
                cell["right"] += _tag_true(found_tags[0], captions[name])
        text = " ".join(captions[name]).lower()
        truths = {"indoors": place == "indoors", "outdoors": place == "outdoors",
                  "black and white": bool(re.search(GREY, text)),
                  "animation": bool(re.search(DRAWN, text))}
        said_facts = {facts.get("place"), facts.get("colour"), facts.get("footage")}
        for fact, true in truths.items():
            cell = t["places"][fact]
            cell["true"] += true
            if fact in said_facts:
                cell["of"] += 1
                cell["right"] += true
        progress(f"{n}/{len(names)} {name}: said {sorted(said)}, captions {sorted(stated)}, "
                 f"tag {tags[0].label if tags else '-'}, scene {places[0].label if places else '-'}, "
                 f"place {facts.get('place')} / {place}")
    return {"source": "COCO val2017 first 128, five human captions each",
            "images": len(names), "tagger": models.tagger.name if models.tagger is not None else "off",
            "places": models.places.name if models.places is not None else "off",
            "halves": {h: _figures(t) for h, t in tally.items()}}


def _figures(t: dict) -> dict:
    rows = {}
    for action, c in t["actions"].items():
        rows[action] = {**c, "precision": round(c["tp"] / c["predicted"], 3) if c["predicted"] else None,
                        "recall": round(c["tp"] / c["true"], 3) if c["true"] else None}
    return {"actions": rows, "tags": _top_tags(t["tags"]), "scenes": _top_tags(t["scenes"]),
            "places": {p: {**c, "precision": round(c["right"] / c["of"], 3) if c["of"] else None,
                           "recall": round(c["right"] / c["true"], 3) if c["true"] else None}
                       for p, c in t["places"].items()}}


def _top_tags(by_tag: dict) -> dict:
    """How often the top tag was one the captions name, in all and by tag."""
    return {"top1_right": sum(c["right"] for c in by_tag.values()),
            "top1_of": sum(c["of"] for c in by_tag.values()), "by_tag": dict(by_tag)}


def precision_table(payload: dict) -> dict:
    """The confidence contract's table: per action, right of stated, on both halves (captions
    miss what they do not mention, so this errs low)."""
    table: dict[str, dict] = {}
    for figures in payload["halves"].values():
        for action, c in figures["actions"].items():
            cell = table.setdefault(action, {"right": 0, "of": 0})
            cell["right"] += c["tp"]
            cell["of"] += c["predicted"]
    return {"source": payload["source"], "actions": table}


# ---- labelled action clips ------------------------------------------------------------------

OPTIONS = 5
QUESTION = "What activity is shown in this video?"


def read_manifest(path: Path) -> list[dict]:
    """Rows of a clips manifest (CSV: file, label, dataset, repo, repo_path, ...); files are
    relative to the manifest's folder."""
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r.get("file") and r.get("label")]
    if not rows:
        raise ValueError(f"{path} lists no clips (columns file and label)")
    for r in rows:
        r["path"] = str(path.parent / r["file"])
    return sorted(rows, key=lambda r: r["file"])


def options_for(row: dict, labels: list[str]) -> tuple[list[str], int]:
    """The clip's label among four others, in an order fixed by the clip's name."""
    import random

    rng = random.Random(row["file"])
    others = rng.sample(sorted(set(labels) - {row["label"]}), OPTIONS - 1)
    answer = rng.randrange(OPTIONS)
    return others[:answer] + [row["label"]] + others[answer:], answer


def seen_in_training(row: dict) -> bool:
    """Whether a clip may be in the video classifier's training data (Kinetics-400, its clips and
    the demos cut from them): such a clip's picks do not measure it, so the contract leaves
    them out; the question's figures keep them."""
    return row.get("dataset", "").lower().startswith("kinetics")


def question_rows(rows: list[dict]) -> list[dict]:
    """The five-option question of every clip, in dev-qa.csv's layout, for `eval`."""
    labels = [r["label"] for r in rows]
    out = []
    for k, r in enumerate(rows, start=1):
        options, answer = options_for(r, labels)
        out.append({"video": r["file"], "qid": k, "type": "activity", "question": QUESTION,
                    "answer": answer, **{f"a{i}": o for i, o in enumerate(options)}})
    return out


def clips_bench(rows: list[dict], settings, progress=lambda line: None) -> dict:
    """Every clip ingested (into `settings.home`, so a second run reuses it), its actions and
    tags read back, scored per action against the clip's label, and its five-option question
    decided by code from the activity evidence alone."""
    from backend.agent import option_match, precision, queries, video_tables
    from backend.agent.activity_queries import named_actions
    from backend.ingest.pipeline import ingest
    from backend.library import Library

    labels = [r["label"] for r in rows]
    half = halves([r["file"] for r in rows])
    per_action = {h: defaultdict(lambda: {"tp": 0, "predicted": 0, "true": 0}) for h in ("tune", "report")}
    decided = {h: {"right": 0, "wrong": 0, "undecided": 0, "best_right": 0, "clips": 0,
                   "high": 0, "high_right": 0} for h in ("tune", "report")}
    # Code's picks by what each rests on: the confidence contract's cells for activities.
    behind = {h: defaultdict(lambda: {"right": 0, "of": 0}) for h in ("tune", "report")}
    stated = {h: defaultdict(lambda: {"stated": 0, "right": 0, "wrong": 0})
              for h in ("tune", "report")}
    clips = []
    library = Library(settings.home)
    for n, r in enumerate(rows, start=1):
        try:
            video_id = ingest(Path(r["path"]), settings).video_id
        except Exception as e:  # a clip that does not ingest is reported, not fatal
            clips.append({"file": r["file"], "label": r["label"], "error": str(e)[:200]})
            progress(f"{n}/{len(rows)} {r['file']}: not ingested ({str(e)[:80]})")
            continue
        tables = video_tables.VideoTables(library.get(video_id).db_path)
        found = queries.run(queries.TypedQuery(operation="activity", target="", time="",
                                               until="", words=""), QUESTION, tables)
        said = {row["action"] for row in tables.rows("SELECT DISTINCT action FROM actions")}
        top = [t["tag"] for t in tables.rows("SELECT tag FROM tags GROUP BY tag "
                                             "ORDER BY MAX(score) DESC LIMIT 3")]
        truth = named_actions(r["label"])
        h = half[r["file"]]
        for action in actions.ACTIONS:
            cell = per_action[h][action]
            cell["predicted"] += action in said
            cell["true"] += action in truth
            cell["tp"] += action in said and action in truth
        options, answer = options_for(r, labels)
        decision = option_match.decide(found.typed or {}, options)
        d = decided[h]
        d["clips"] += 1
        chosen = decision.chosen if decision else None
        d["right" if chosen == answer else "wrong" if chosen is not None else "undecided"] += 1
        rests_on = decision.rests_on if chosen is not None else []
        trained_on = seen_in_training(r)
        for kind in rests_on if not trained_on else ():
            behind[h][kind]["of"] += 1
            behind[h][kind]["right"] += chosen == answer
        for activity, pick in (_activity_picks(tables, options) if not trained_on else {}).items():
            cell = stated[h][activity]
            cell["stated"] += 1
            if pick is not None:
                cell["right" if pick == answer else "wrong"] += 1
        if rests_on and precision.earns_high({"operation": "activity",
                                              "conditions": "; ".join(rests_on)}):
            d["high"] += 1
            d["high_right"] += chosen == answer
        best = max(decision.scores, key=decision.scores.get) if decision and decision.scores else None
        d["best_right"] += best == answer
        clips.append({"file": r["file"], "label": r["label"], "half": h, "actions": sorted(said),
                      "tags": top, "options": options, "answer": answer, "chosen": chosen,
                      "rests_on": rests_on, "trained_on": trained_on,
                      "scores": decision.scores if decision else {}})
        progress(f"{n}/{len(rows)} {r['file']} ({r['label']}): actions {sorted(said)}, tags {top}, "
                 f"code chose {options[chosen] if chosen is not None else '-'}")
    return {"clips": clips,
            "halves": {h: _clip_figures({a: c for a, c in per_action[h].items()
                                         if c["predicted"] or c["true"]}, decided[h], behind[h],
                                        stated[h])
                       for h in ("tune", "report")}}


def _activity_picks(tables, options: list[str]) -> dict[str, int | None]:
    """Each activity the video classifier found likely somewhere in the clip (as library search
    finds it), with the option it alone would have code pick (None: none)."""
    from backend.agent import option_match
    from backend.agent.activity_queries import has
    from backend.library_search import LIKELY_ACTIVITY
    from models import lexicon

    if not has(tables, "activities"):
        return {}
    likely = tables.rows(f"SELECT DISTINCT activity FROM activities "
                         f"WHERE score >= {LIKELY_ACTIVITY}")
    picks = {}
    for row in likely:
        alone = {"words": dict.fromkeys(lexicon.terms(row["activity"]), 1.0), "tags": {}}
        decision = option_match.decide({"activities": alone}, options)
        picks[row["activity"]] = decision.chosen if decision else None
    return picks


def merged(runs: list[dict]) -> dict:
    """Several sets' `clips_bench` payloads as one: clips listed together, counts summed half by
    half (each set's questions keep their own options: a clip's distractors are its set's
    other labels)."""
    halves = {}
    for h in ("tune", "report"):
        parts = [run["halves"][h] for run in runs]
        question: Counter = Counter()
        for part in parts:
            question.update(part["question"])
        halves[h] = _clip_figures(_summed([p["actions"] for p in parts], ("tp", "predicted", "true")),
                                  question, _summed([p["rests_on"] for p in parts], ("right", "of")),
                                  _summed([p["activities"] for p in parts],
                                          ("stated", "right", "wrong")))
    return {"clips": [c for run in runs for c in run["clips"]], "halves": halves}


def _summed(tables: list[dict[str, dict]], keys: tuple[str, ...]) -> dict[str, dict]:
    """{name: {key: count}} tables added up, name by name (derived figures left out)."""
    total: dict[str, dict] = defaultdict(lambda: dict.fromkeys(keys, 0))
    for table in tables:
        for name, cell in table.items():
            for key in keys:
                total[name][key] += cell[key]
    return dict(total)


def picks_table(payload: dict) -> dict:
    """The confidence contract's cells for code's activity picks: per kind of evidence a pick
    rests on, right of picked, on the tuning halves only (the reporting halves check it), of
    clips the classifier was not trained on."""
    clips = [c for c in payload["clips"] if c.get("half") == "tune" and not c.get("trained_on")]
    return {"source": f"the questions of {len(clips)} labelled action clips, tuning half",
            "rests_on": payload["halves"]["tune"]["rests_on"]}


def _clip_figures(per_action: dict, question: dict, rests_on: dict, stated: dict) -> dict:
    return {"actions": {a: {**c, "precision": _ratio(c["tp"], c["predicted"]),
                            "recall": _ratio(c["tp"], c["true"])} for a, c in per_action.items()},
            "question": dict(question), "rests_on": dict(rests_on), "activities": dict(stated)}


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None
