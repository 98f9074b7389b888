"""Options read as typed values and matched against the typed evidence a tool computed.

A 1.5B model reading "Kinds tracked (vehicles): 43 cars" answered "no vehicles"; a kitchen clip
with four refrigerator tracks answered "a dishwasher". Here code reads each option for the
values it names (kinds, with "no X" as the empty set; colours; words shown or said) and scores
it against the evidence: a set overlap for kinds, the distance between colour names, string
similarity for words. One option best supported decides, with no model call; several equally
supported are all the model may choose among; none supported is said so.

Evidence is the `typed` dict of a tool's result (`video_tables.Result.typed`):
- kinds: {kind: how many tracked}, with group (the broader word asked for, or None) and
  unnamed (moving things no detector named);
- colours: the colour names measured on the object asked about, and shares: {a colour name:
  its share of that one object's pixels};
- texts: what was read on screen or said (one entry per text or sentence);
- activities: {"words": {a word of what people do ('riding', 'horse') or of a picture fact
  ('indoors'): how strongly the video shows it, 0-1}, "tags": {a tag's label: [its WordNet
  id, strength]}, "acts": [the words that are only of what people were seen doing]}, matched
  through WordNet (`models/lexicon.py`), and "facts": the shots' picture facts held over most
  of the interval ('colour', 'indoors'), for a choice between values of one;
- places: {a place on screen, in `describe.where`'s words: how many reads there}, for
  on-screen text, or how many sightings there, for an object (`picture_queries.position`; then
  where says which, and distances: {'near', 'midway' or 'far' from the camera: how many
  sightings});
- ways: {a way across or along the picture, in `meaning.direction`'s words: how many tracks
  go it} and motions: {'moving' or 'still': how many tracks moved over their life or stayed in
  place} (`picture_queries.movement`), or the camera's seconds in each (`scene_queries`, with
  motions_of saying which);
- relations: {a relation in `places.RELATIONS`' words: on how many of the frames two things
  were seen together it held}, with frames, that number (`relation_queries`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher

from backend import kinds, places
from backend.agent import meaning, typed_values
from backend.agent.activity_queries import FACTS, TAGS, fact_named
from backend.agent.relation_queries import HOLDS
from backend.ingest.actions import POSTURES


@dataclass(frozen=True)
class Decision:
    """What the evidence says of the options: those it supports best (code picks when there is
    one), those it rules out, and why, with scores."""

    supported: list[int]          # the options with the best score, if that score is > 0
    chosen: int | None            # the one option code picks, or None
    basis: str                    # 'computed' (the option states the evidence) or 'nearest'
    explanation: str
    scores: dict[int, float] = field(default_factory=dict)   # option -> score; absent: unread
    # The measurements the chosen option rests on, each measured apart (`precision`).
    rests_on: list[str] = field(default_factory=list)

    @property
    def contradicted(self) -> list[int]:
        """Options the evidence speaks against (a score of 0)."""
        return [i for i, s in self.scores.items() if s == 0]


def decide(typed: dict, options: list[str]) -> Decision | None:
    """The options matched against the typed evidence; None when the evidence holds nothing
    the options can be read against (then the planner goes on as before)."""
    if not typed or not options:
        return None
    if "kinds" in typed:
        return _by_kinds(typed, options)
    if "activities" in typed:
        return _by_facts(typed["activities"].get("facts", []), options) or \
            _by_activities(typed["activities"], options)
    if typed.get("colours") or typed.get("shares"):
        return _by_colours(typed.get("colours", []), options, typed.get("shares", {}))
    if typed.get("places") and all(meaning.place(o) or meaning.distance(o) for o in options):
        return _by_places(typed["places"], options, typed.get("where", "where the text was read"),
                          typed.get("distances", {}))
    if typed.get("relations") is not None and any(places.relation_said(o) for o in options):
        return _by_relations(typed["relations"], typed.get("frames", 0), options)
    if typed.get("ways") and all(meaning.direction(o) for o in options):
        return _by_ways(typed["ways"], options)
    if sum(typed.get("motions", {}).values()) and \
            all(meaning.motion(o) and not meaning.ways(o) for o in options):
        return _by_motions(typed["motions"], options, typed.get("motions_of", "the tracks"))
    if typed.get("texts"):
        return _by_words(typed["texts"], options)
    return None


def _decision(scores: dict[int, float], options: list[str], what: str,
              exact: float = 1.0) -> Decision:
    """Best-scored options; code picks the one best when it beats all the others and every
    option was read (one the evidence cannot speak to may still be the answer)."""
    shown = "; ".join(f"'{options[i]}' {s:.2f}" for i, s in sorted(scores.items()))
    best = max(scores.values(), default=0.0)
    others = [i for i in range(len(options)) if i not in scores]
    if best <= 0 and others:
        return Decision(others, None, "", f"Only options {', '.join(repr(options[i]) for i in others)} "
                        f"are not ruled out by {what}, which cannot speak to them (scores: {shown}).",
                        scores)
    if best <= 0:
        return Decision([], None, "", f"No option is consistent with {what} (scores: {shown}).",
                        scores)
    supported = [i for i, s in scores.items() if s == best]
    unread = len(options) - len(scores)
    if len(supported) == 1 and unread == 0:
        i = supported[0]
        basis = "computed" if best >= exact else "nearest"
        return Decision(supported, i, basis, f"Option '{options[i]}' matches {what} best "
                        f"(score {best:.2f}; scores: {shown}).", scores)
    named = ", ".join(repr(options[i]) for i in supported)
    return Decision(supported + others, None, "",
                    (f"Options {named} match {what} equally" if len(supported) > 1 else
                     f"Option {named} matches {what} best") + f" (scores: {shown})"
                    + (f"; {unread} option(s) name nothing this evidence can tell" if unread
                       else "") + ".", scores)


# ---- kinds ----------------------------------------------------------------------------------

_NONE = re.compile(r"^\s*(?:no|none|nothing|nobody|no one|no-one|neither|not any)\b", re.I)
_ONLY = re.compile(r"\b(?:only|just)\b", re.I)


_NOBODY = re.compile(r"^\s*(?:nobody|no one|no-one|no people|no persons?|not anyone)\b", re.I)


def option_kinds(option: str) -> tuple[set[str], bool] | None:
    """(kinds named, names the empty set) of an option: 'cars and a box truck' -> ({car,
    truck}, False); 'no vehicles' -> ({group:vehicle}, True), none of them; 'nobody' ->
    ({person}, True); 'nothing' -> (set(), True), nothing at all; None when it names no kind."""
    if _NOBODY.search(option):
        return {"person"}, True
    named = set(kinds.named(option))
    groups = {kinds.GROUP_WORDS[w] for w in re.findall(r"[a-z]+", option.lower())
              if w in kinds.GROUP_WORDS}
    if _NONE.search(option):
        return named | {f"group:{g}" for g in groups}, True
    if not named and not groups:
        return None
    return named | {f"group:{g}" for g in groups}, False


def _by_kinds(typed: dict, options: list[str]) -> Decision | None:
    """Score: 0.7 x the share of the option's kinds seen + 0.3 x their overlap with all kinds
    seen (so 'cars and trucks' beats 'cars' when both were seen); 'no X' is 1 when no X was
    seen and 0 otherwise."""
    seen = {k for k, n in typed["kinds"].items() if n}
    group = typed.get("group")
    unnamed = typed.get("unnamed", 0)
    # Moving things no detector named may be of any kind that moves by itself the detectors
    # cannot name; and of any such kind at all when they named none in this video (cars seen
    # from straight above): then code cannot rule those kinds in or out.
    stand_in = unnamed and not seen & kinds.MOVING
    scores: dict[int, float] = {}
    all_seen: set[int] = set()   # options every kind of which was seen
    for i, option in enumerate(options):
        read = option_kinds(option)
        if read is None:
            continue
        named, empty = read
        if empty:
            scope = scope_of(named) or (set(kinds.GROUPS[group]) if group else None)
            present = seen if scope is None else seen & scope
            if not present and unnamed and (scope is None or scope & kinds.MOVING):
                continue  # an unnamed moving thing may be one: code cannot tell
            scores[i] = 0.0 if present else 1.0
            all_seen |= set() if present else {i}
            continue
        named = _expand_groups(named, seen)
        movers = {k for k in named if k in kinds.MOVING or k.startswith("any ")}
        if stand_in and movers:
            continue  # the unnamed moving things may be any of them: code cannot tell
        hits = {k for k in named if any(d in seen for d in kinds.detected_as(k))}
        # A kind that moves by itself may be one of the unnamed moving things (one no detector
        # here names, or one it missed, small and far away): half a hit.
        maybe = {k for k in named - hits if unnamed and k in kinds.MOVING}
        found = len(hits) + len(maybe) / 2
        scores[i] = round(0.7 * found / len(named) + 0.3 * found / len(named | seen), 2)
        all_seen |= {i} if hits == named else set()
    what = f"the kinds tracked ({', '.join(sorted(seen)) or 'none'}" + \
        (f", among {group}s" if group else "") + ")"
    if not scores:
        return None
    decision = _decision(scores, options, what)
    if decision.chosen in all_seen and len(scores) == len(options) and \
            all(s == 0 for i, s in scores.items() if i != decision.chosen):
        # Every kind it names was seen, and nothing of any other option: that is computed.
        return Decision(decision.supported, decision.chosen, "computed", decision.explanation,
                        scores)
    return decision


def scope_of(named: set[str]) -> set[str]:
    """The kinds an option's kinds (`option_kinds`) stand for, groups spread into their
    members: 'no vehicles' -> the vehicles; 'nobody' -> person; 'nothing' -> none named (all
    kinds)."""
    out = {k for k in named if not k.startswith("group:")}
    for g in (k.split(":", 1)[1] for k in named if k.startswith("group:")):
        out |= set(kinds.GROUPS[g])
    return out


def _expand_groups(named: set[str], seen: set[str]) -> set[str]:
    """'vehicles' in an option means whichever vehicles were seen (or a vehicle, if none)."""
    out = {k for k in named if not k.startswith("group:")}
    for g in (k.split(":", 1)[1] for k in named if k.startswith("group:")):
        members = seen & set(kinds.GROUPS[g])
        out |= members or {f"any {g}"}
    return out


# ---- colours --------------------------------------------------------------------------------

# The colour names ingest measures (`describe.colour_name`) and the words options use for them.
COLOUR_WORDS = {"black": "black", "white": "white", "grey": "grey", "gray": "grey",
                "silver": "silver", "dark grey": "dark grey", "dark gray": "dark grey",
                "red": "red", "dark red": "dark red", "maroon": "dark red",
                "burgundy": "dark red", "orange": "orange", "brown": "brown", "tan": "brown",
                "beige": "beige", "cream": "beige", "yellow": "yellow", "gold": "yellow",
                "golden": "yellow", "olive": "olive", "khaki": "olive", "green": "green",
                "teal": "teal", "turquoise": "teal", "cyan": "teal", "blue": "blue",
                "light blue": "blue", "navy": "navy", "dark blue": "navy", "purple": "purple",
                "violet": "purple", "pink": "pink", "magenta": "pink"}
# Colours a camera and a mean over a box mix up: one step apart.
_NEIGHBOURS = {("white", "grey"), ("white", "silver"), ("grey", "silver"), ("grey", "dark grey"),
               ("dark grey", "black"), ("silver", "dark grey"), ("navy", "black"),
               ("navy", "blue"), ("dark red", "red"), ("dark red", "brown"), ("brown", "orange"),
               ("orange", "red"), ("yellow", "olive"), ("olive", "green"), ("green", "teal"),
               ("teal", "blue"), ("purple", "pink"), ("pink", "red"), ("beige", "white"),
               ("beige", "brown"), ("purple", "navy"), ("brown", "olive")}


def colours_in(text: str) -> list[str]:
    """The colour names a text uses, longest phrases first ('dark blue' is navy, not blue)."""
    lowered = f" {' '.join(re.findall(r'[a-z]+', text.lower()))} "
    found = []
    for word in sorted(COLOUR_WORDS, key=len, reverse=True):
        if f" {word} " in lowered:
            found.append(COLOUR_WORDS[word])
            lowered = lowered.replace(f" {word} ", " _ ")
    return list(dict.fromkeys(found))


def colour_distance(a: str, b: str) -> int:
    """0 the same colour, 1 neighbours a camera mixes up, 2 apart."""
    return 0 if a == b else 1 if (a, b) in _NEIGHBOURS or (b, a) in _NEIGHBOURS else 2


# Where no colour clearly led, or the one that led is no option's: the option whose colour
# covers at least this many times the pixels of the next is taken, a neighbour's pixels counted
# at NEIGHBOUR_SHARE (a silver option gets a quarter of the grey). Chosen on the tuning half of
# a colour-labelled set of pedestrians and vehicles (`bench appearance --colour-set`, five
# options a garment): the right option taken 44 % -> 56 % of the time, a guess counted as one
# in as many as are left (46 % -> 53 % on the reporting half).
SHARE_LEAD, NEIGHBOUR_SHARE = 1.5, 0.25


def _by_colours(measured: list[str], options: list[str], shares: dict[str, float]) -> Decision:
    """The colour measured decides; where it does not (none clearly led, or it is no
    option's), the pixels' shares."""
    if measured:
        scores: dict[int, float] = {}
        for i, option in enumerate(options):
            named = colours_in(option)
            if named:
                # Every colour the option names must be near one measured: 1 same, 0.5 neighbour.
                scores[i] = min(1.0 - min(colour_distance(c, m) for m in measured) / 2
                                for c in named)
        decision = _decision(scores, options, f"the colours measured ({', '.join(measured)})")
        if decision.chosen is not None or not shares:
            return decision
    return _by_shares(shares, options)


def _by_shares(shares: dict[str, float], options: list[str]) -> Decision:
    """The option whose colour the most of the thing's pixels are named, where it leads the
    next SHARE_LEAD times ('nearest': no measured colour states it); else those with any
    pixels of their colour are left to choose among."""
    scores = {}
    for i, option in enumerate(options):
        named = colours_in(option)
        if named:
            scores[i] = min(sum(share * (1.0 if name == c else NEIGHBOUR_SHARE
                                         if colour_distance(name, c) == 1 else 0.0)
                                for name, share in shares.items()) for c in named)
    ranked = sorted(scores, key=scores.get, reverse=True)
    shown = "; ".join(f"'{options[i]}' {s:.2f}" for i, s in sorted(scores.items()))
    pixels = ", ".join(f"{n} {v:.0%}" for n, v in sorted(shares.items(), key=lambda x: -x[1]))
    best, second = ([scores[i] for i in ranked] + [0.0, 0.0])[:2]
    if len(scores) == len(options) and best > 0 and best >= SHARE_LEAD * second:
        return Decision([ranked[0]], ranked[0], "nearest",
                        f"Of the options' colours, '{options[ranked[0]]}' covers the most of its "
                        f"pixels ({pixels}), {SHARE_LEAD:g} times the next or more "
                        f"(scores: {shown}).", scores)
    unread = [i for i in range(len(options)) if i not in scores]
    some = [i for i in ranked if scores[i] > 0] + unread
    return Decision(some or list(range(len(options))), None, "",
                    f"No option's colour clearly covers the most of its pixels ({pixels}; "
                    f"scores: {shown}).", scores)


# ---- words shown or said ---------------------------------------------------------------------

def _letters(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def word_similarity(option: str, text: str) -> float:
    """How nearly `text` holds the option's words: 1 when it contains them, else the best
    SequenceMatcher ratio of the option against a run of the text's words as long as it."""
    wanted, said = _letters(option), _letters(text)
    if not wanted or not said:
        return 0.0
    if re.search(rf"\b{re.escape(wanted)}\b", said):
        return 1.0
    words, n = said.split(), len(wanted.split())
    runs = [" ".join(words[j:j + n]) for j in range(max(1, len(words) - n + 1))]
    return max(SequenceMatcher(None, wanted, run).ratio() for run in runs)


_WORDS_NEAR = 0.75   # below this a reading is not taken for the option's words (OCR slips)


def _by_words(texts: list[str], options: list[str]) -> Decision | None:
    if any(typed_values.find(o) for o in options):
        return None  # dates, times, speeds: compared by their meaning (`meaning`), not letters
    scores = {}
    for i, option in enumerate(options):
        best = max(word_similarity(option, t) for t in texts)
        scores[i] = best if best >= _WORDS_NEAR else 0.0
    shown = ", ".join(f'"{t}"' for t in texts[:6])
    return _decision(scores, options, f"the words read or said ({shown})")


# ---- places on screen ------------------------------------------------------------------------

def _by_places(places: dict[str, int], options: list[str], what: str,
               distances: dict[str, int]) -> Decision:
    """Score: the share of the reads (or sightings) in the third of the picture the option
    names, or along the side it names ('on the left': any of the three thirds at the left);
    of an option saying how far from the camera, the share of sightings at that distance
    (none for text read on screen, which has no distance)."""
    total = sum(places.values()) or 1
    at = {}
    for where, reads in places.items():
        if third := meaning.place(where):
            at[third] = at.get(third, 0) + reads
    scores = {}
    for i, option in enumerate(options):
        if named := meaning.place(option):
            scores[i] = round(sum(n for third, n in at.items() if meaning.in_place(third, named))
                              / total, 2)
        elif distances and (far := meaning.distance(option)):
            scores[i] = round(distances.get(far, 0) / total, 2)
    shown = ", ".join(f"{w} ({n})" for w, n in {**places, **distances}.items())
    return _decision(scores, options, f"{what} ({shown})", exact=0.8)


def _by_ways(ways: dict[str, int], options: list[str]) -> Decision:
    """Score: the share of the tracks going the way the option names; a majority states it."""
    shown = ", ".join(f"{w} ({n})" for w, n in ways.items())
    return _by_majority(ways, options, meaning.direction, f"the ways the tracks go ({shown})")


def _by_motions(motions: dict[str, float], options: list[str], of: str) -> Decision:
    """Options that say a thing moves or keeps still, scored by the share of what was measured
    (tracks over their life, the camera's seconds) in each state."""
    return _by_majority(motions, options, meaning.motion, f"{of} in motion "
                        f"({motions.get('moving', 0)}) and kept still ({motions.get('still', 0)})")


def _by_majority(counts: dict[str, float], options: list[str], read, what: str) -> Decision:
    """Each option scored by the share of `counts` under the key `read` finds in it; a
    majority states it."""
    total = sum(counts.values()) or 1
    scores = {i: round(counts.get(read(o), 0) / total, 2) for i, o in enumerate(options)}
    return _decision(scores, options, what, exact=0.5)


def _by_relations(held: dict[str, int], frames: int, options: list[str]) -> Decision:
    """Score: the share of the frames both were seen on where the relation the option says
    held; one held on more than half states it."""
    scores = {i: round(held.get(said[0], 0) / max(frames, 1), 2) for i, o in enumerate(options)
              if (said := places.relation_said(o))}
    shown = ", ".join(f"{r} {n}" for r, n in held.items() if n)
    return _decision(scores, options, f"the relations their boxes showed on {frames} frames "
                     f"({shown or 'none'})", exact=HOLDS)


# ---- activities -----------------------------------------------------------------------------

# Code picks an activity only where one option is this well supported and this far ahead of any
# other: the actions and tags are measurements with errors, and an option they cannot speak to
# may be right.
_ACTIVITY_PICK, _ACTIVITY_MARGIN = 0.4, 0.1
# Words every option about a video shares: they tell no option apart.
_GENERIC = {"person", "people", "man", "men", "woman", "women", "someone", "somebody", "boy",
            "girl", "child", "children", "kid", "video", "clip", "scene", "shown", "activity",
            "action", "something", "thing", "things", "doing", "does", "done", "seen", "one",
            "playing", "play", "plays"}


def _by_activities(shown: dict, options: list[str]) -> Decision | None:
    """Score: for each content word of the option, its best link (WordNet: same word 1.0, a
    kind of it 0.8, derived 0.6, named in its definition 0.5: archery is "shooting arrows with
    a bow") to a word of what people were seen doing, a tag of the picture (by the tag's own
    synset) or a picture fact, times how strongly the video shows it, each thing seen
    supporting one word at most; the option's score is 0.6 of its best word's and 0.4 of the
    mean of all (so 'riding a horse' beats 'riding a bike' where a horse was ridden, and a long
    option is not sunk by its other words). One option far enough ahead is picked; else the
    options with any support are what the model chooses among. How far a pick is trusted is
    the measured precision of the actions behind it (`precision.earns_high`)."""
    from models import lexicon

    words, tags, acts = shown.get("words", {}), shown.get("tags", {}), set(shown.get("acts", ()))
    origins = shown.get("origins", {})
    if not words and not tags:
        return None
    scores, behind = {}, {}
    for i, option in enumerate(options):
        asked = [t for t in lexicon.terms(option) if t not in _GENERIC] or lexicon.terms(option)
        if not asked:
            continue
        links = {(term, ("word", w)): (_fact_link(term, w) if origins.get(w) == FACTS
                                        else _word_link(term, w, w in acts)) * s
                 for term in asked for w, s in words.items()}
        links |= {(term, ("tag", label)): max(lexicon.tag_link(term, wnid),
                                              lexicon.gloss_tag_link(term, wnid)) * s
                  for term in asked for label, (wnid, s) in tags.items()}
        given = _each_once(links)
        best = [given[t][0] if t in given else 0.0 for t in asked]
        scores[i] = round(0.6 * max(best) + 0.4 * sum(best) / len(best), 3)
        behind[i] = sorted({origins.get(name, "unmeasured") if source == "word" else TAGS
                            for _, (source, name) in given.values()})
    if not scores or max(scores.values()) <= 0:
        return None  # nothing shown speaks to any option: the planner reads on
    shown_words = ", ".join([f"{w} {v:.2f}" for w, v in sorted(words.items(), key=lambda kv: -kv[1])[:6]] +
                            [f"{t} {v[1]:.2f}" for t, v in list(tags.items())[:4]])
    listed = "; ".join(f"'{options[i]}' {v:.2f}" for i, v in scores.items())
    ranked = sorted(scores.values(), reverse=True)
    best_score, second = ranked[0], (ranked[1] if len(ranked) > 1 else 0.0)
    supported = [i for i, v in scores.items() if v == best_score]
    if len(supported) == 1 and best_score >= _ACTIVITY_PICK and best_score - second >= _ACTIVITY_MARGIN:
        i = supported[0]
        return Decision(supported, i, "computed",
                        f"Option '{options[i]}' is what the video shows best ({shown_words}; "
                        f"scores: {listed}).", scores, rests_on=behind[i])
    backed = [i for i, v in scores.items() if v > 0]
    return Decision(backed, None, "", f"Options {', '.join(repr(options[i]) for i in backed)} "
                    f"have some support in what the video shows ({shown_words}; scores: "
                    f"{listed}); the evidence cannot tell them apart.", scores)


def _by_facts(facts: list[str], options: list[str]) -> Decision | None:
    """Options that each name one value of the same picture fact ("in colour", "black and
    white"): the value the shots hold over most of the interval decides. None where the options
    name no such choice, or the shots hold no verdict on it (no clear indoors or outdoors)."""
    named = [fact_named(o) for o in options]
    if None in named or len({column for column, _ in named}) != 1 or \
            len({value for _, value in named}) < 2:
        return None
    column = named[0][0]
    held = [value for _, value in named if value in facts]
    if not held:
        return None
    scores = {i: float(value == held[0]) for i, (_, value) in enumerate(named)}
    decision = _decision(scores, options, f"the picture's {column} ({held[0]} over most of it)")
    return replace(decision, rests_on=[FACTS]) if decision.chosen is not None else decision


def _word_link(term: str, word: str, act: bool) -> float:
    """How well a word of what was seen supports an option's term. A posture links through its
    own verb only: 'ride' is to "sit and travel on the back of" an animal, and people seated
    anywhere (spectators, judges) are not riding."""
    from models import lexicon

    through_definition = 0.0 if act and word in POSTURES else lexicon.gloss_link(term, word)
    return max(lexicon.link(term, word, act), through_definition)


def _fact_link(term: str, word: str) -> float:
    """How well a word of a picture fact (`activity_queries.FACT_WORDS`, shown at 1.0) supports
    an option's term: the same word or a WordNet synonym or kind of it ('animated cartoon' for
    'cartoon'), never a definition that mentions it. Night is "the time after sunset and before
    sunrise while it is dark outside": through that, a street in daylight (lit, outdoors) had
    answered "what is the weather like?" with 'dark night'."""
    from models import lexicon

    return lexicon.link(term, word, False)


def _each_once(links: dict[tuple[str, tuple], float]) -> dict[str, tuple[float, tuple]]:
    """{term: (its support, the thing seen that gives it)} where every thing seen supports one
    term at most, strongest pairs first: 'riding' seen supports "riding", not also "bike"
    (defined as "ride a bicycle")."""
    given: dict[str, tuple[float, tuple]] = {}
    used = set()
    for (term, seen), value in sorted(links.items(), key=lambda kv: -kv[1]):
        if value > 0 and term not in given and seen not in used:
            given[term] = (value, seen)
            used.add(seen)
    return given
