"""Open questions ("what does the person do in this video?") answered from a digest built by code.

Asked in the app on a kitchen clip, the planner took 342 s and 11 LLM calls and answered with
the question itself. Here code writes down the typed evidence over the interval asked about, in
time order with its times: who and what is in view and when, how each moves, what is said and
what is shown, and how the picture changes. At most one model call turns that into sentences;
an answer that repeats the question, or says nothing the digest holds, is refused by code, and
code's own account of the same evidence in sentences (`account`) is the answer.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from backend import kinds
from backend.agent import activity_queries, option_match, ordinals, queries, typed_values
from backend.agent.timephrases import Span, resolve
from backend.agent.video_tables import ONE, Target, VideoTables, plural
from backend.ingest import describe
from backend.ingest.actions import ACTIONS
from models.motion import CATEGORY as MOVING

# "What does the person do", "what happens", "describe the video", "what is going on".
_OPEN = re.compile(r"^\s*(?:what (?:does|do|did|is|are|was|were) [\w' ]{0,40}?(?:do|doing)\b|"
                   r"what (?:happens|happened|is happening|goes on|is going on|'s going on)|"
                   r"describe\b|summari[sz]e\b|give (?:me )?(?:a |an )?(?:summary|overview)|"
                   r"tell me (?:about|what)|what (?:is|'s) (?:this|the) (?:video|clip) about|"
                   r"what (?:can|do) (?:you|i|we) see\b)", re.I)
# Subjects of "what is she doing?" that stand for whoever is in view.
_PRONOUNS = {"he", "she", "they", "everyone", "everybody", "someone", "somebody"}
# Asked what people do, up to this many are told one by one (six who take turns are six short
# stories); a digest the model tells counts them beyond `activity_queries.FEW`.
_EACH_DOING = 6
_MAX_LINES = 24
# A tag this sure is borne out by the captions three times in four; under it, a third to a half.
_SURE_TAG = 0.5
_EACH = 8   # up to this many of a kind are listed one by one; more, as one line
_WORD = re.compile(r"[a-z0-9]+")
# Words that name evidence: what was tracked, its colour and where it goes. An account must
# name some of the digest's (or a word it quotes from speech or the screen): sharing only its
# phrasing ("events that occur between 0.0 and 30.0 seconds", "a clock time") tells nothing.
_VALUE_WORDS = frozenset(
    {w for kind in (*kinds.COCO, *kinds.BEYOND_COCO, "people") for name in (kind, kinds.plural(kind))
     for w in _WORD.findall(name)} | set(option_match.COLOUR_WORDS) |
    {"left", "right", "up", "down", "away", "towards", "toward", "top", "bottom", "middle",
     "centre", "center", "stays", "place", "enters", "leaves"} |
    {w for action in ACTIONS for w in _WORD.findall(action)})
_QUOTED = re.compile(r'"([^"]*)"')
# A denial ("no dog is seen", "nothing else moves") names a kind rightly where none was seen.
_NEGATED = re.compile(r"\b(?:no|not|none|nobody|nothing|without|neither|nor)\b|n't\b")


def is_open(question: str) -> bool:
    """Whether a question without options asks for an account of the video, not one value;
    not one about a tracked object it names or picks ("what is person 3 doing", "what is the
    man in red doing": that one's actions, `ordinals`)."""
    if not _OPEN.search(question) or ONE.search(question):
        return False
    # "What is the man in red (on the left) doing": that one's actions, as for person 3.
    asked = activity_queries.DOING.match(question)
    return not (asked and (ordinals.look_asked(asked.group(1), "person") or
                           ordinals.asked(asked.group(1))))


def asks_doing(question: str) -> bool:
    """Whether an open question asks what people do ("what is the person doing?"), which code
    answers person by person (`doing`): told by the model, six people's doings came back as one
    person jumping at one moment."""
    asked = activity_queries.DOING.match(question)
    if not (asked and is_open(question)):
        return False
    # One word for people, no more: of "the tall man" the model reads the digest.
    who = re.sub(r"^(?:the|this|that|these|those)\s+", "", asked.group(1).lower())
    return who in _PRONOUNS or (" " not in who and kinds.named(who) == ["person"])


def build(tables: VideoTables, question: str) -> tuple[list[str], list[float], Span | None]:
    """(lines of the digest in time order, their times, the interval it covers)."""
    span = resolve(question, tables.duration)
    if span is not None and span.is_moment:
        span = Span(max(0.0, span.start - 2), min(tables.duration, span.end + 2), span.phrase)
    lo, hi = (span.start, span.end) if span else (0.0, tables.duration)
    events: list[tuple[float, str]] = []
    rows = tables.rows(f"SELECT id, category, first_seen, last_seen, appearance, action FROM "
                       f"instances WHERE last_seen >= {lo} AND first_seen <= {hi} "
                       f"ORDER BY first_seen LIMIT 60")
    by_kind: dict[str, list[dict]] = {}
    for r in rows:
        if r["category"] != MOVING:
            by_kind.setdefault(r["category"], []).append(r)
    for kind, found in by_kind.items():
        if len(found) > _EACH:
            events.append((found[0]["first_seen"], _many(kind, found)))
            continue
        for r in found:
            action = f", {r['action']}" if r["action"] else ""
            events.append((r["first_seen"], f"[{r['first_seen']:.1f}-{r['last_seen']:.1f} s] "
                                             f"#{r['id']} {r['appearance'] or kind}{action}"))
    movers = sum(r["category"] == MOVING for r in rows)
    if movers:
        events.append((lo, f"[{lo:.1f}-{hi:.1f} s] {plural(movers, MOVING)} no detector could "
                           "name"))
    for r in _speech(tables, lo, hi):
        events.append((r["t_start"], f'[{r["t_start"]:.1f} s] said: "{r["text"].strip()}"'))
    typed, reads = _screen(tables, lo, hi)
    if typed:
        events.append((typed[1], f"[{lo:.1f}-{hi:.1f} s] shown on screen: {typed[0]}"))
    for r in reads:
        events.append((r["t"], f'[{r["t"]:.1f} s] shown on screen: "{r["text"]}"'))
    for r in _camera(tables, lo, hi):
        events.append((r["t_start"], f"[{r['t_start']:.1f} s] the camera moves: {r['camera']}"))
    events += _picture(tables, lo, hi)
    events.sort(key=lambda e: e[0])
    people = sum(r["category"] == "person" for r in rows)
    head = [f"Between {lo:.1f} and {hi:.1f} s: {_what_happens(tables, span, people)}"
            f"tracked: {_tally(rows)}."]
    return head + [text for _, text in events[:_MAX_LINES]], [t for t, _ in events], span


def account(tables: VideoTables, span: Span | None) -> str:
    """The digest's evidence in sentences, written by code: the answer where the model's
    telling is refused or cannot be had, where the digest's own bracketed lines had been the
    answer ("[0.0-42.4 s] 1 moving object no detector could name ...")."""
    lo, hi = (span.start, span.end) if span else (0.0, tables.duration)
    counts = {r["category"]: r["n"] for r in tables.rows(
        f"SELECT category, COUNT(*) AS n FROM instances WHERE last_seen >= {lo} AND "
        f"first_seen <= {hi} GROUP BY category ORDER BY n DESC LIMIT 12")}
    people, movers = counts.pop("person", 0), counts.pop(MOVING, 0)
    said = [f"Between {lo:.1f} and {hi:.1f} s:"] if span else []
    said += _people(tables, span, people) if people else ["No person is seen."]
    things = [plural(n, kind) for kind, n in counts.items()]
    things += [f"{plural(movers, MOVING)} no detector could name"] if movers else []
    if things:
        said.append(f"{'Also tracked' if people else 'Tracked'}: {', '.join(things)}.")
    if seems := activity_queries.happening(tables, span):
        said.append(f"A video classifier reads it as {seems}.")
    if facts := _telling_facts(tables, span):
        said.append(f"The picture: {', '.join(facts)}.")
    speech = _speech(tables, lo, hi)
    for r in speech[:2]:
        words = r["text"].strip()
        said.append(f'At {r["t_start"]:.1f} s someone says: "{words}"' +
                    "." * (not words.endswith((".", "!", "?"))))
    said += ["More is said after that."] if len(speech) > 2 else []
    typed, reads = _screen(tables, lo, hi)
    if typed or reads:
        said.append("On screen: " + (typed[0] if typed else
                                     ", ".join(f'"{r["text"]}"' for r in reads) + "."))
    if moves := _camera(tables, lo, hi):
        said.append("The camera moves: " + ", ".join(f"{r['camera']} at {r['t_start']:.1f} s"
                                                     for r in moves) + ".")
    return " ".join(said)


def doing(tables: VideoTables, span: Span | None) -> str:
    """What people do over the span in sentences, each person's actions with their times where
    few are seen, and how a video classifier reads the whole where it is at least as sure as a
    tag the digest calls sure; '' where no action was read."""
    lo, hi = (span.start, span.end) if span else (0.0, tables.duration)
    people = tables.rows(f"SELECT COUNT(*) AS n FROM instances WHERE category = 'person' AND "
                         f"last_seen >= {lo} AND first_seen <= {hi}")[0]["n"]
    said = _people(tables, span, people, _EACH_DOING) if people else []
    if len(said) < 2:
        return ""
    # Code's own answer states only the classifier's surer readings: a street read as busking
    # at 0.49, a man at a table as moving furniture at 0.39.
    if seems := activity_queries.happening(tables, span, sure=_SURE_TAG):
        said.append(f"A video classifier reads it as {seems}.")
    return " ".join(said)


def _people(tables: VideoTables, span: Span | None, people: int,
            each: int = activity_queries.FEW) -> list[str]:
    doing = activity_queries.doings(tables, span, each=each)
    at_once = _at_once(tables, span, people)
    return [f"{plural(people, 'person')} {'is' if people == 1 else 'are'} seen"
            f"{f', at most {at_once} at once' if at_once else ''}.",
            *([f"What they do: {doing}."] if doing else [])]


def _speech(tables: VideoTables, lo: float, hi: float) -> list[dict]:
    return tables.rows(f"SELECT t_start, text FROM speech WHERE t_end >= {lo} AND "
                       f"t_start <= {hi} ORDER BY t_start LIMIT 8")


def _screen(tables: VideoTables, lo: float, hi: float) -> tuple[tuple[str, float] | None,
                                                                 list[dict]]:
    """((the typed values read on screen, described, and when first), the other reads, the
    most read first): a running timecode is one value, not forty readings."""
    reads = tables.rows(f"SELECT text, MIN(t) AS t, COUNT(*) AS n FROM ocr WHERE t BETWEEN {lo} "
                        f"AND {hi} GROUP BY text ORDER BY n DESC, t LIMIT 40")
    if typed := typed_values.described([(r["text"], r["t"]) for r in reads]):
        return ((typed.removeprefix("Typed values: "), reads[0]["t"]),
                [r for r in reads if not typed_values.find(r["text"])][:3])
    return None, reads[:5]


def _camera(tables: VideoTables, lo: float, hi: float) -> list[dict]:
    return tables.rows(f"SELECT t_start, camera FROM scenes WHERE camera NOT IN ('static', "
                       f"'unknown') AND t_end >= {lo} AND t_start <= {hi} ORDER BY t_start "
                       f"LIMIT 4")


def _what_happens(tables: VideoTables, span: Span | None, people: int) -> str:
    """What people do and where, ahead of the inventory: a head line that only counted the
    tracked kinds was told back by the model as the account of what happens."""
    said = ""
    if seems := activity_queries.happening(tables, span):
        said += f"what seems to be happening (a video classifier): {seems}; "
    if doing := activity_queries.doings(tables, span):
        said += f"what people do: {doing}; "
    if at_once := _at_once(tables, span, people):
        said += f"at most {plural(at_once, 'person')} in view at once; "
    if facts := _telling_facts(tables, span):
        said += f"the picture: {', '.join(facts)}; "
    return said


def _telling_facts(tables: VideoTables, span: Span | None) -> list[str]:
    # Colour footage from a camera in daylight is what every video is: only the rest tells.
    return [f for f in activity_queries.picture_facts(tables, span)
            if f not in ("colour", "camera", "lit")]


def _at_once(tables: VideoTables, span: Span | None, people: int) -> int | None:
    """The most people in view at the same moment (`queries.most_at_once`), where more than one
    was tracked: how many are in view together is no single person's action, and an account
    told each person's doings but not whether they were there together."""
    if people < 2:
        return None
    return int(queries.most_at_once(tables, Target(None, "person", "person"), span, "").value)


def _picture(tables: VideoTables, lo: float, hi: float) -> list[tuple[float, str]]:
    """What the whole picture shows beyond the tracked kinds (ImageNet tags, quoted so that an
    account naming them counts as naming evidence), and its facts: indoors, black and white."""
    span = Span(lo, hi, "")
    lines = []
    tags = [t for t in tables.rows(
        f"SELECT tag, MAX(score) AS score, MIN(t_start) AS t0 FROM tags WHERE score >= "
        f"{activity_queries.TAG_FLOOR} AND t_end >= {lo} AND t_start <= {hi} GROUP BY tag "
        f"ORDER BY score DESC LIMIT 5")] if activity_queries.has(tables, "tags") else []
    sure = [t for t in tags if t["score"] >= _SURE_TAG]
    if sure:
        lines.append((sure[0]["t0"], f"[{lo:.1f}-{hi:.1f} s] the whole picture shows: " + ", ".join(
            f'"{t["tag"]}" ({t["score"]:.2f})' for t in sure)))
    if guesses := [t for t in tags if t["score"] < _SURE_TAG]:
        lines.append((guesses[0]["t0"], f"[{lo:.1f}-{hi:.1f} s] an image classifier's guesses, "
                      "more often wrong than right: " + ", ".join(
                          f'"{t["tag"]}" ({t["score"]:.2f})' for t in guesses)))
    if facts := activity_queries.picture_facts(tables, span):
        lines.append((lo, f"[{lo:.1f}-{hi:.1f} s] the picture: {', '.join(facts)}"))
    return lines


def _many(kind: str, found: list[dict]) -> str:
    """Many of a kind as one line: how many, when, which ways they go and what they do, most
    first."""
    ways: dict[str, int] = {}
    doing: dict[str, int] = {}
    for r in found:
        for way in describe.directions(r["action"] or ""):
            ways[way] = ways.get(way, 0) + 1
        for act in set(describe.actions_in(r["action"] or "")):
            doing[act] = doing.get(act, 0) + 1
    going = ", ".join(f"{n} {way}" for way, n in sorted(ways.items(), key=lambda kv: -kv[1])[:3])
    if doing:
        going += "; " * bool(going) + ", ".join(
            f"{n} {act}" for act, n in sorted(doing.items(), key=lambda kv: -kv[1])[:4])
    return (f"[{found[0]['first_seen']:.1f}-{max(r['last_seen'] for r in found):.1f} s] "
            f"{plural(len(found), kind)}" + (f": {going}" if going else ""))


def _tally(rows: list[dict]) -> str:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["category"]] = counts.get(r["category"], 0) + 1
    return ", ".join(plural(n, k) for k, n in sorted(counts.items(), key=lambda kv: -kv[1])) \
        or "nothing tracked"


def refused(answer: str, question: str, digest: list[str]) -> str | None:
    """Why a model's account is not shown, or None: it repeats the question, it says nothing
    the digest holds (no word naming its evidence beyond the question's own), it goes round in
    a loop, or it tells of a kind of thing the digest never names."""
    said, asked = answer.strip().lower(), question.strip().lower()
    if not said:
        return "it is empty"
    if SequenceMatcher(None, said, asked).ratio() > 0.8 or said.rstrip("?.! ") in asked:
        return "it repeats the question"
    text = " ".join(digest).lower()
    named = {w for w in _WORD.findall(text) if w in _VALUE_WORDS}
    named |= {w for quote in _QUOTED.findall(text) for w in _WORD.findall(quote) if len(w) > 2}
    if not set(_WORD.findall(said)) & (named - set(_WORD.findall(asked))):
        return "it says nothing the evidence holds"
    if _loops(_WORD.findall(said)):
        return "it goes round in a loop"
    if _NEGATED.search(said):
        return None
    seen = set(kinds.named(text))  # read once: named() scans every kind's words
    if unseen := [k for k in kinds.named(said) if k not in seen]:
        return f"it tells of {', '.join(kinds.plural(k) for k in unseen)}, which nothing seen holds"
    return None


def _loops(words: list[str], run: int = 6, times: int = 3) -> bool:
    """Whether some run of words comes back three times: a small model that loses its thread
    says one clause over and over, with a new time or colour each round, until its tokens run
    out."""
    seen: dict[tuple[str, ...], int] = {}
    for k in range(len(words) - run + 1):
        key = tuple(words[k:k + run])
        seen[key] = seen.get(key, 0) + 1
        if seen[key] >= times:
            return True
    return False
