"""What happens: the typed query behind "what is the woman doing", "what activity is shown" and
"what animal appears" when the answer is no COCO kind.

It reads the `actions` table (what tracked people do, from keypoints and objects at hand), the
`tags` table (what an ImageNet classifier sees in the whole picture) and the whole-picture facts
of the shots (colour or black and white, camera or animation, light, indoors or outdoors) and
the things tracked in view, more weakly (a ball, a microwave), over the interval asked about.
The statement lists who did what and when with the evidence; `typed` holds every term with how
strongly the video shows it, so that code scores each option through the WordNet lexicon
(`option_match`), and the model only chooses among what code cannot tell apart.
"""

from __future__ import annotations

import re
from collections import defaultdict

from backend import kinds
from backend.agent.timephrases import Span
from backend.agent.video_tables import (HOW_MANY, YES_NO, Result, Target, VideoTables,
                                        id_list, plural, quoted)
from backend.errors import QueryError
from backend.ingest.actions import ACTIONS, BETWEEN_PEOPLE, POSTURES, WITH_OBJECTS
from models import lexicon
from models.motion import CATEGORY as MOVING

# A tag seen at this probability or more is evidence; below, ImageNet's thousand classes guess.
TAG_FLOOR = 0.1
_LISTED = 12
_HAPPENING = 5   # activities listed, the most seen first
_SAID = 0.2      # an account names an activity seen this sure over the time asked about
FEW = 3   # up to this many people, an account names each; more, it counts them
# "What is the man doing?", "what did person 3 do?": who is asked about.
DOING = re.compile(r"^\s*what (?:does|do|did|is|are|was|were) ([\w' ]{0,40}?)\s*(?:do|doing)\b",
                   re.I)
# Things in view tell what is done with them, less surely than an action read off a body does:
# a ball for basketball, a microwave for cooking, a racket for tennis.
_THING_WEIGHT = 0.6
# What an activity answer may rest on besides the actions read off bodies (named by action):
# each is measured apart in `action_precision.json`.
CLASSIFIER, TAGS, THINGS, FACTS = ("video classifier", "picture tags", "things in view",
                                   "picture facts")
# The words an action stands for where its own name's words would mislead ('facing' alone is
# also a garment's lining; 'each other' says nothing).
ACTION_WORDS = {"facing each other": ("facing each other", "face to face"),
                "hands joined": ("holding hands", "hand in hand", "hand"),
                "turning round": ("turn", "turning round", "turning around"),
                "raising arms": ("raise", "raising arms", "hands up"),
                "using a phone": ("phone", "call", "using a phone"),
                "passing a ball": ("pass", "ball", "passing a ball"),
                "upside down": ("upside down", "upside", "inverted")}
# The words an option may use for a picture fact that tells something (colour footage shot
# with a camera in daylight is what every video is, unless said otherwise).
FACT_WORDS = {"black and white": ("black and white", "monochrome", "grayscale", "greyscale",
                                  "silent film", "old film"),
              "animation": ("animation", "cartoon", "animated", "drawing", "drawn", "anime"),
              "dark": ("dark", "night", "darkness"),
              "indoors": ("indoors", "inside", "indoor", "interior", "room"),
              "outdoors": ("outdoors", "outside", "outdoor", "open air")}
# Every value of the shots' columns an option may name, the ordinary ones too, for a choice
# between them ("in colour or black and white?"); the light is left out: a night street lit by
# its shop windows reads brighter than daytime streets (docs/EVALUATION.md, 2026-11-30).
_CHOSEN_FACTS = {"colour": {"black and white": FACT_WORDS["black and white"],
                           "colour": ("colour", "color", "coloured", "colored", "in colour")},
                 "footage": {"animation": FACT_WORDS["animation"],
                             "camera": ("real", "live action", "live-action", "filmed",
                                        "camera footage", "real life", "photographed")},
                 "place": {"indoors": FACT_WORDS["indoors"], "outdoors": FACT_WORDS["outdoors"]}}


def fact_named(text: str) -> tuple[str, str] | None:
    """(column, value) of the one picture fact a short option names ('black and white' ->
    ('colour', 'black and white'), 'outside' -> ('place', 'outdoors')), or None."""
    lowered = text.lower()
    named = {(column, value) for column, values in _CHOSEN_FACTS.items()
             for value, words in values.items()
             if any(re.search(rf"\b{re.escape(w)}\b", lowered) for w in words)}
    return named.pop() if len(named) == 1 else None


def has(tables: VideoTables, table: str, column: str = "id") -> bool:
    """Whether the video has the table (and column): videos ingested before actions, tags and
    the shots' picture facts have none of them."""
    try:
        tables.rows(f"SELECT {column} FROM {table} LIMIT 1")
        return True
    except QueryError:
        return False


def overlap(span: Span | None, table: str = "") -> str:
    """The SQL condition of an interval row overlapping the span ('' for the whole video)."""
    if span is None:
        return ""
    return f" AND {table}t_end >= {span.start} AND {table}t_start <= {span.end}"


def activity(tables: VideoTables, target: Target, span: Span | None, words: str,
             question: str = "") -> Result:
    if not has(tables, "actions"):
        return Result("What people do was not read when this video was ingested (an older "
                      "version); delete it and ingest it again.", support="unobserved")
    who = ""
    if target.instance is not None:
        track = tables.rows(f"SELECT category, first_seen, last_seen FROM instances "
                            f"WHERE id = {target.instance}")
        if not track or track[0]["category"] != "person":
            return _not_a_person(tables, target.instance, track[0] if track else None)
        who = f" AND a.instance_id = {target.instance}"
        # What the whole picture shows while they are in view is what they are part of, not
        # what the rest of the video shows.
        span = span or Span(track[0]["first_seen"], track[0]["last_seen"],
                            f"while #{target.instance} is in view")
    length = (span.end - span.start) if span is not None else tables.duration
    length = max(length, 1e-3)
    sql = ("SELECT a.instance_id, a.action, a.t_start, a.t_end, a.score, a.evidence, "
           "a.other_id, o.category AS other FROM actions a LEFT JOIN instances o "
           f"ON o.id = a.other_id WHERE 1 = 1{who}{overlap(span, 'a.')} "
           "ORDER BY a.t_start LIMIT 400")
    rows = tables.rows(sql)
    tags = tables.rows(f"SELECT tag, wnid, MAX(score) AS score, MIN(t_start) AS t0, "
                       f"MAX(t_end) AS t1 FROM tags "
                       f"WHERE score >= {TAG_FLOOR}{overlap(span)} GROUP BY tag "
                       f"ORDER BY score DESC LIMIT {_LISTED}") if has(tables, "tags") else []
    happening = _happening(tables, span)
    facts = picture_facts(tables, span)
    # a word of what is done -> the action it was seen as -> seconds
    by_action: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    acts, things = set(), set()
    for r in rows:
        seconds = max(r["t_end"] - r["t_start"], 0.2) * r["score"]
        with_whom = lexicon.terms(r["other"]) if r["other"] and r["other"] != "person" else []
        done = ACTION_WORDS.get(r["action"], lexicon.terms(r["action"]))
        acts.update(done)
        things.update(with_whom)
        for word in {*done, *with_whom}:
            by_action[word][r["action"]] += seconds
    words = {w: round(_strength(sum(seen.values()), length), 3) for w, seen in by_action.items()}
    # Which measurement each word's strength comes from: the confidence contract trusts a pick
    # as far as the measured precision of what it rests on (`precision.earns_high`).
    origins = {w: max(by_action[w], key=by_action[w].get) for w in words}

    def shown(word: str, strength: float, origin: str) -> None:
        if strength > words.get(word, 0.0):
            words[word], origins[word] = strength, origin

    for kind, seconds in _things_in_view(tables, span).items():
        for word in lexicon.terms(kind):
            things.add(word)
            shown(word, round(_THING_WEIGHT * _strength(seconds, length), 3), THINGS)
    for r in happening:
        # Its probability over the time asked about, read as a tag's is: 0.5 or more is sure.
        strength = round(min(1.0, 2 * max(r["seen"], 0.0) / length), 3)
        for word in lexicon.terms(r["activity"]):
            shown(word, strength, CLASSIFIER)
    for fact in facts:
        for word in FACT_WORDS.get(fact, ()):
            shown(word, 1.0, FACTS)
    shown_tags = {t["tag"]: [t["wnid"], round(min(1.0, t["score"] * 2), 3)] for t in tags}
    text = _statement(rows, tags, facts, span, happening)
    actions_used = sorted({r["action"] for r in rows})
    # Colour footage shot in daylight tells nothing: with no action and no tag, nothing to go on.
    support = "computed" if rows or tags or happening else \
        "read" if set(facts) & set(FACT_WORDS) else "none"
    result = Result(text, value="", sql=sql, rows=rows[:_LISTED * 4], support=support,
                    times=sorted({r["t_start"] for r in rows})[:20] + [t["t0"] for t in tags][:5] +
                    [r["t0"] for r in happening][:3],
                    instance_ids=sorted({r["instance_id"] for r in rows}),
                    conditions="; ".join(actions_used),
                    typed={"activities": {"words": words, "tags": shown_tags,
                                             "acts": sorted(acts - things), "origins": origins,
                                             "account": _account(tables, span, target, rows),
                                             "facts": facts,
                                             "person": target.instance, "done": actions_used}})
    asked = named_actions(question) if YES_NO.search(question) else set()
    if target.instance is None and HOW_MANY.search(question) and \
            (counted := counted_actions(question)):
        _how_many(result, tables, span, counted, question)
    elif target.instance is not None and not rows:
        _nothing_read(result, target, track[0], asked)
    elif asked:
        _yes_or_no(result, rows, asked, target)
    elif target.instance is not None and DOING.match(question):
        # A single tracked person's doings are their actions, code's sentence: the model retold
        # them in two calls, at times as one moment of them ("#3 standing at 0.0 s").
        result.typed["said"] = result.typed["activities"]["account"]
    return result


def _nothing_read(result: Result, target: Target, track: dict, asked: set[str]) -> None:
    """Of a single person of whom no action at all was read (a track of a second): whether they
    did what is asked cannot be told (not seen doing it is no "no"), and what they did is that
    nothing was read (told the picture's guesses instead, a model had a woman walking down a
    street playing the accordion)."""
    if asked:
        result.text = (f"No action of {target.label} was read, so whether they were "
                       f"{' or '.join(sorted(asked))} cannot be told.\n{result.text}")
        result.value, result.support = "", "unobserved"
        return
    result.typed["said"] = (f"No action of {target.label} was read (seen "
                            f"{track['first_seen']:.1f}-{track['last_seen']:.1f} s), so what "
                            f"they did cannot be told.")
    result.support = "computed"


def _account(tables: VideoTables, span: Span | None, target: Target, rows: list[dict]) -> str:
    """Who did what and when, in one line, for code to answer with where the model's own
    account is refused ('' where no action was read)."""
    if not rows:
        return ""
    said = doings(tables, span, target.instance)
    return f"{said}." if target.instance is None or said.startswith("#") else f"#{target.instance} {said}."


def _not_a_person(tables: VideoTables, instance: int, track: dict | None) -> Result:
    """Why nothing is known of what #n does where #n is no tracked person, with who is."""
    people = id_list([r["id"] for r in tables.rows(
        "SELECT id FROM instances WHERE category = 'person' ORDER BY id LIMIT 40")])
    what = (f"#{instance} is no person but a {track['category']}, seen "
            f"{track['first_seen']:.1f}-{track['last_seen']:.1f} s" if track
            else f"No track is numbered #{instance}")
    return Result(f"{what}; what people do is read of the people tracked: {people or 'none'}.",
                  value="", support="unobserved")


def _yes_or_no(result: Result, rows: list[dict], asked: set[str], target: Target) -> None:
    """A yes-or-no question about actions ("is anyone sitting?", "does person 2 wave?"): yes
    where one was seen, with who and when, its confidence that action's measured precision; no
    where none was, which rests on what the rules find (their recall), so it is never high."""
    seen = [r for r in rows if r["action"] in asked]
    who = f"{target.label} was not" if target.instance is not None else "nobody was"
    if seen:
        listed = "; ".join(f"#{r['instance_id']} {r['action']} {r['t_start']:.1f}-"
                           f"{r['t_end']:.1f} s" for r in seen[:8])
        more = f"; and {len(seen) - 8} more" if len(seen) > 8 else ""
        result.text = f"Yes: {listed}{more}.\n{result.text}"
        result.value, result.conditions = "yes", "; ".join(sorted({r["action"] for r in seen}))
        result.instance_ids = sorted({r["instance_id"] for r in seen})
        result.times = sorted({r["t_start"] for r in seen})[:20]
    else:
        result.text = (f"No: {who} seen {' or '.join(sorted(asked))} (as the pose and object "
                       f"rules read people; they can miss it).\n{result.text}")
        result.value, result.conditions = "no", ""
    result.support = "computed"


def counted_actions(question: str) -> set[str]:
    """The actions a how-many question counts people by: those it names, where any other thing
    it names is what they are done with ("how many people hold a cup"); none where a body's
    action is placed by another thing ("how many people are sitting on the bench" is a relation
    to the bench, which the actions do not hold)."""
    asked = named_actions(question)
    if any(k != "person" for k in kinds.named(question)) and not asked & set(WITH_OBJECTS):
        return set()
    return asked


def _how_many(result: Result, tables: VideoTables, span: Span | None, asked: set[str],
              question: str) -> None:
    """A count of the people seen doing what is asked ("how many people are sitting?", "how many
    people ride a bicycle?"), of the people in view over the time asked about: code's sentence.
    With a thing named besides people, only what is done with it counts ("how many people hold
    a cup")."""
    things = [k for k in kinds.named(question) if k != "person"]
    with_what = f" AND o.category IN ({', '.join(map(quoted, things))})" if things else ""
    doers = sorted(r["instance_id"] for r in tables.rows(
        "SELECT DISTINCT a.instance_id FROM actions a LEFT JOIN instances o ON o.id = a.other_id "
        f"WHERE a.action IN ({', '.join(map(quoted, sorted(asked)))}){with_what}"
        f"{overlap(span, 'a.')}"))
    seen = "" if span is None else f" AND last_seen >= {span.start} AND first_seen <= {span.end}"
    people = tables.rows(f"SELECT COUNT(*) AS n FROM instances WHERE category = 'person'{seen}")
    with_them = " or ".join(f"{'an' if t[0] in 'aeiou' else 'a'} {t}" for t in things)
    done = " or ".join(sorted(asked)) + (f" {with_them}" if things else "")
    listed = f" ({id_list(doers[:8])}{', ...' * (len(doers) > 8)})" if doers else ""
    said = (f"{len(doers)} of {plural(people[0]['n'], 'person')} "
            f"{'was' if len(doers) == 1 else 'were'} seen {done}{listed}.")
    result.text = f"{said}\n{result.text}"
    result.value, result.support = str(len(doers)), "computed"
    result.typed["said"] = said
    result.instance_ids = doers
    # A count is right only where the rules missed nobody (their recall), which is not measured
    # as their precision is: it rests on no measured condition, so it is never high.
    result.conditions = ""


def _strength(seconds: float, length: float) -> float:
    """How strongly something shown for `seconds` of the `length` asked about shows: shown for
    a tenth of it or more, as strong as evidence gets here."""
    return min(1.0, 0.3 + seconds / length * 7)


def _things_in_view(tables: VideoTables, span: Span | None) -> dict[str, float]:
    """{kind: seconds in view} of the tracked things other than people over the span."""
    lo, hi = (span.start, span.end) if span is not None else (0.0, tables.duration)
    rows = tables.rows(f"SELECT category, SUM(MIN(last_seen, {hi}) - MAX(first_seen, {lo})) AS s "
                       f"FROM instances WHERE category NOT IN ('person', {quoted(MOVING)}) AND "
                       f"last_seen >= {lo} AND first_seen <= {hi} GROUP BY category LIMIT 40")
    return {r["category"]: max(r["s"] or 0.0, 0.2) for r in rows}


def picture_facts(tables: VideoTables, span: Span | None) -> list[str]:
    """The whole-picture facts of the shots in the interval that hold for most of it."""
    if not has(tables, "shots", "colour"):
        return []
    shots = tables.rows(f"SELECT t_start, t_end, colour, footage, light, place FROM shots "
                        f"WHERE 1 = 1{overlap(span)}")
    total = sum(s["t_end"] - s["t_start"] for s in shots) or 1.0
    facts = []
    for column in ("colour", "footage", "light", "place"):
        share: dict[str, float] = defaultdict(float)
        for s in shots:
            if s[column]:
                share[s[column]] += s["t_end"] - s["t_start"]
        if share and max(share.values()) / total >= 0.5:
            facts.append(max(share, key=share.get))
    return facts


def _statement(rows: list[dict], tags: list[dict], facts: list[str], span: Span | None,
               happening: list[dict]) -> str:
    where = f" between {span.start:.1f} and {span.end:.1f} s" if span is not None else ""
    by_person: dict[int, list[str]] = defaultdict(list)
    seconds: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows:
        seconds[r["instance_id"]][r["action"]] += r["t_end"] - r["t_start"]
    for r in rows:
        # Where many are listed, a posture only where it is most of what the person does:
        # left out, someone who mostly kept still was read by their briefest movements.
        mine = seconds[r["instance_id"]]
        if r["action"] in POSTURES and len(rows) > _LISTED and \
                mine[r["action"]] < sum(mine.values()) / 2:
            continue
        other = f" {r['other']} #{r['other_id']}" if r["other_id"] is not None else ""
        by_person[r["instance_id"]].append(
            f"{r['action']}{other} {r['t_start']:.1f}-{r['t_end']:.1f} s ({r['evidence']})")
    if by_person:
        people = "; ".join(f"#{pid}: " + ", ".join(done[:6]) + (" ..." if len(done) > 6 else "")
                           for pid, done in list(by_person.items())[:_LISTED])
        text = f"What people do{where} (read from body keypoints and the objects at hand): {people}."
    else:
        text = f"No action of a tracked person was read{where}."
    if happening:
        text += " What is happening (Kinetics-400 video classifier, best probability): " + \
            ", ".join(f"{r['activity']} {r['score']:.2f} ({r['t0']:.0f}-{r['t1']:.0f} s)"
                      for r in happening) + "."
    if tags:
        text += " The whole picture shows (ImageNet and Places365 classifiers, probability): " + ", ".join(
            f"{t['tag']} {t['score']:.2f} ({t['t0']:.0f}-{t['t1']:.0f} s)" for t in tags) + "."
    if facts:
        text += f" Picture: {', '.join(facts)}."
    return text


def _happening(tables: VideoTables, span: Span | None) -> list[dict]:
    """The activities the video classifier read over the span, the most seen first: `seen` is
    the seconds of the span each covers, times its probability."""
    if not has(tables, "activities"):
        return []
    lo, hi = (span.start, span.end) if span is not None else (0.0, tables.duration)
    return tables.rows(
        f"SELECT activity, MAX(score) AS score, MIN(t_start) AS t0, MAX(t_end) AS t1, "
        f"SUM((MIN(t_end, {hi}) - MAX(t_start, {lo})) * score) AS seen FROM activities "
        f"WHERE 1 = 1{overlap(span)} GROUP BY activity ORDER BY seen DESC LIMIT {_HAPPENING}")


def happening(tables: VideoTables, span: Span | None, sure: float = 0.0) -> str:
    """What seems to be happening over the span, for an account: the video classifier's
    activities that hold for a fifth of it or more ('washing dishes 0.83'), each at least
    `sure` at its best."""
    length = max((span.end - span.start) if span is not None else tables.duration, 1e-3)
    return ", ".join(f"{r['activity']} {r['score']:.2f}" for r in _happening(tables, span)
                     if r["seen"] / length >= _SAID and r["score"] >= sure)


def doings(tables: VideoTables, span: Span | None, instance: int | None = None,
           each: int = FEW) -> str:
    """What people do over the span, as one line for an account: each person's main actions
    in time order where `each` or fewer did anything ('#2 standing 3.4-12.0 s, walking
    12.2-13.2 s'), how many do each and for how long where more did ('5 people sitting (4-20 s
    each), 5 walking (1 s each), 1 jumping (a moment)'). A posture is left out for a person who
    spends most of their time doing something else (standing tells less than waving), and kept
    where it is most of what they do: left out, people who mostly kept still were told back by
    whatever brief movement they also made."""
    if not has(tables, "actions"):
        return ""
    # person -> action -> [seconds weighted by score, first start, last end, seconds seen]
    runs: dict[int, dict[str, list[float]]] = defaultdict(dict)
    whose = f" AND a.instance_id = {instance}" if instance is not None else ""
    for r in tables.rows(f"SELECT a.instance_id, a.action, a.t_start, a.t_end, a.score, "
                         f"o.category AS other FROM actions a LEFT JOIN instances o ON "
                         f"o.id = a.other_id WHERE 1 = 1{whose}{overlap(span, 'a.')} LIMIT 2000"):
        # What a thing is done with is part of what is done: holding a frisbee, riding a horse.
        done = r["action"] + (f" {r['other']}" if r["other"] not in (None, "person") else "")
        run = runs[r["instance_id"]].setdefault(done, [0.0, r["t_start"], r["t_end"], 0.0])
        run[0] += max(r["t_end"] - r["t_start"], 0.2) * r["score"]
        run[1], run[2] = min(run[1], r["t_start"]), max(run[2], r["t_end"])
        run[3] += r["t_end"] - r["t_start"]
    done = {pid: _main(acts) for pid, acts in runs.items()}
    if len(done) <= each:
        return "; ".join(f"#{pid} " + ", ".join(f"{a} {_when(run[1], run[2])}" for a, run in acts)
                         for pid, acts in sorted(done.items(), key=lambda kv: kv[1][0][1][1]))
    lasted: dict[str, list[float]] = defaultdict(list)
    for acts in done.values():
        for action, run in acts:
            lasted[action].append(run[3])
    ranked = sorted(lasted.items(), key=lambda kv: (-len(kv[1]), -sum(kv[1])))[:5]
    return ", ".join(f"{len(s)} {'person' if len(s) == 1 else 'people'} {a} ({_lasting(s)})"
                     for a, s in ranked)


def _main(acts: dict[str, list[float]]) -> list[tuple[str, list[float]]]:
    """A person's three longest actions in time order; a posture only where it is at least
    half of what was seen of them (or all there is)."""
    total = sum(run[0] for run in acts.values())
    ranked = sorted(acts.items(), key=lambda kv: -kv[1][0])
    kept = [(a, run) for a, run in ranked if a not in POSTURES or run[0] >= total / 2]
    return sorted((kept or ranked[:1])[:3], key=lambda kv: kv[1][1])


def _when(start: float, end: float) -> str:
    return f"at {start:.1f} s" if end - start < 0.5 else f"{start:.1f}-{end:.1f} s"


def _lasting(seconds: list[float]) -> str:
    """How long each of several people did something: 'a moment', '9-25 s each'."""
    lo, hi = min(seconds), max(seconds)
    each = " each" * (len(seconds) > 1)
    if hi < 0.5:
        return "a moment" + each
    if lo < 0.5:
        return f"a moment to {hi:.0f} s"
    if round(lo) == round(hi):
        return f"{hi:.0f} s{each}"
    return f"{lo:.0f}-{hi:.0f} s each"


def named_actions(text: str) -> set[str]:
    """The actions of the vocabulary (`actions.ACTIONS`) a text names: one of its words is the
    action's own verb in one of its commonest senses ('who is riding a horse' -> riding,
    'who sits' -> sitting, 'when does she sit down' -> sitting down, the change); an action
    between people must be named whole ('hugging')."""
    said = lexicon.terms(text)
    found = set()
    for action in ACTIONS:
        if action in BETWEEN_PEOPLE and len(action.split()) > 1:
            if action in text.lower():
                found.add(action)
            continue
        head = lexicon.terms(action)[0]
        if any(lexicon.link(term, head) == lexicon.SAME for term in said):
            found.add(action)
    return found
