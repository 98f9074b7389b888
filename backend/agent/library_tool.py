"""Questions across the whole library ("in which clip is a bus?", "which clips show three people at
once?"), as VideoRAG asks them of one graph over a collection.

A question about a kind of thing is a typed query run on every video's tables: how many
different ones appear, or the most in view at once, compared with the number asked. Code names
the videos that hold it, with times; nothing is read by a model. Any other question is searched
in every video's knowledge graph and episodic memory, and the best videos come back, each with
its times, for the planner to read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from backend import kinds
from backend.agent import activity_queries, graph_tool, queries, routing, video_tables
from backend.agent.tools import MemorySearch, Observation, ToolContext
from backend.library import VideoEntry

_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_NUMBER = re.compile(r"\b(\d+|" + "|".join(_NUMBER_WORDS) + r")\b")
_MORE_THAN = re.compile(r"\b(?:more than|over)\s*$")
_EXACTLY = re.compile(r"\b(?:exactly|only|just)\s*$")
# Words that name the library's videos themselves, not what is in them ("which video says").
META = re.compile(r"\b(?:videos?|clips?|films?|footage|recordings?|library)\b", re.I)
# Graph nodes that are words the video says or shows.
_WORDS = ("topic", "text")
# An episodic segment this similar to the question (MiniLM cosine) is worth reading.
MIN_SIMILARITY = 0.4


@dataclass
class Found:
    """What one video holds of the question."""

    video_id: str
    name: str
    times: list[float] = field(default_factory=list)
    text: str = ""
    score: float = 0.0
    words: list[str] = field(default_factory=list)  # what it says or shows of the question's

    def line(self) -> str:
        at = ", ".join(f"{t:.1f} s" for t in self.times[:5])
        return f"[{self.name} (video {self.video_id}){' at ' + at if at else ''}] {self.text}"


@dataclass(frozen=True)
class KindQuestion:
    """A question about a kind across videos: the typed query to run on each, and the count
    a video must reach to hold what is asked."""

    kind: str
    operation: str          # count_distinct | most_at_once
    comparison: str         # '>=', '>' or '=='
    n: int

    def holds(self, count: int) -> bool:
        return {">=": count >= self.n, ">": count > self.n, "==": count == self.n}[self.comparison]

    def asked(self) -> str:
        noun = kinds.plural(self.kind)
        if self.operation == "most_at_once":
            return f"How many {noun} are in view at once?"
        return f"How many different {noun} appear?"


def kind_question(question: str) -> KindQuestion | None:
    """The kind question a library question asks, or None ('which clips show three people at
    once' -> most_at_once of person, >= 3; 'in which clip is a bus' -> count_distinct >= 1)."""
    named = kinds.named(question) or (["person"] if routing.PEOPLE.search(question) else [])
    if not named:
        return None
    said = " ".join(question.lower().split())
    comparison, n = ">=", 1
    if number := _NUMBER.search(said):
        n = int(number.group(1)) if number.group(1).isdigit() else _NUMBER_WORDS[number.group(1)]
        before = said[:number.start()]
        comparison = ">" if _MORE_THAN.search(before) else "==" if _EXACTLY.search(before) else ">="
    at_once = routing.MOST.search(said) is not None or (number is not None and n > 1 and
                                                         "different" not in said)
    return KindQuestion(named[0], "most_at_once" if at_once else "count_distinct", comparison, n)


@dataclass
class LibraryTool:
    """Every video of the library, searched for one question."""

    videos: list[VideoEntry]
    store: MemorySearch | None = None
    name: str = "Library"
    description: str = ("search every video in the library: which videos show a kind of thing, "
                        "how many at once, or where something is said, shown or seen; input: "
                        "what to look for")
    sql_timeout_s: float = 2.0
    sql_max_rows: int = 200
    k: int = 3

    def run(self, tool_input: str, ctx: ToolContext) -> Observation:
        # "Somebody talking" asks for speech, not for people: no kind question then.
        medium = _presence_asked(tool_input)
        # "Which clips show people walking" asks for an action, not for people.
        if medium is None and (done := activity_queries.named_actions(tool_input)):
            return _observed_actions(done, self.by_action(done, tool_input), len(self.videos))
        asked = kind_question(tool_input) if medium is None else None
        if asked is not None:
            found, unsure = self.by_kind(asked)
            return _observed_kinds(asked, found, unsure, len(self.videos))
        if found := self.by_words(tool_input, ctx):
            return _observed_words(found, len(self.videos))  # "which video mentions X"
        if medium is not None:
            return _observed_presence(medium, self.by_presence(medium), len(self.videos))
        found = self.by_search(tool_input, ctx)
        if not found:
            return Observation(text="(no video's graph or memory matches)", ok=False)
        return Observation(text="\n".join(f.line() for f in found), support="read",
                           rows=[_row(f) for f in found],
                           times=[t for f in found for t in f.times[:1]])

    def by_kind(self, asked: KindQuestion) -> tuple[list[Found], list[Found]]:
        """Videos that hold what is asked, and those where only unnamed moving things could
        (a stand-in is never counted as the kind)."""
        found, unsure = [], []
        query = queries.TypedQuery(operation=asked.operation, target=asked.kind, time="",
                                   until="", words="")
        for video in self.videos:
            tables = video_tables.VideoTables(video.db_path, self.sql_timeout_s, self.sql_max_rows)
            result = queries.run(query, asked.asked(), tables)
            if result.support == "proxy":
                unsure.append(Found(video.video_id, video.name, list(result.times or []), result.text))
            elif result.support == "computed" and result.value.isdigit() and \
                    asked.holds(int(result.value)):
                found.append(Found(video.video_id, video.name, list(result.times or []), result.text,
                                   float(result.value)))
        return found, unsure

    def by_action(self, done: set[str], question: str) -> list[Found]:
        """Videos where someone does what is asked ('who is riding a horse'), longest first;
        where the question names a kind as well, only with that kind (the ridden horse)."""
        with_kinds = [k for k in kinds.named(question) if k != "person"]
        listed = ", ".join(video_tables.quoted(a) for a in sorted(done))
        found = []
        for video in self.videos:
            tables = video_tables.VideoTables(video.db_path, self.sql_timeout_s, self.sql_max_rows)
            if not activity_queries.has(tables, "actions"):
                continue
            rows = tables.rows(
                "SELECT a.instance_id, a.action, a.t_start, a.t_end, a.evidence, o.category AS other "
                f"FROM actions a LEFT JOIN instances o ON o.id = a.other_id WHERE a.action IN ({listed}) "
                "ORDER BY a.t_end - a.t_start DESC LIMIT 20")
            if with_kinds:
                rows = [r for r in rows if r["other"] in with_kinds]
            if rows:
                said = "; ".join(f"#{r['instance_id']} {r['action']}"
                                 f"{' ' + r['other'] if r['other'] else ''} "
                                 f"{r['t_start']:.1f}-{r['t_end']:.1f} s ({r['evidence']})"
                                 for r in rows[:3])
                found.append(Found(video.video_id, video.name, sorted(r["t_start"] for r in rows),
                                   said, sum(r["t_end"] - r["t_start"] for r in rows)))
        return sorted(found, key=lambda f: -f.score)

    def by_presence(self, medium: str) -> list[Found]:
        """Videos with speech ('speech') or on-screen text ('screen_text'), most first: seconds
        of speech, or reads of text."""
        sql = _PRESENCE_SQL[medium]
        found = []
        for video in self.videos:
            tables = video_tables.VideoTables(video.db_path, self.sql_timeout_s, self.sql_max_rows)
            if (tables.no_speech() if medium == "speech" else tables.no_ocr()):
                continue
            row = tables.rows(sql)[0]
            if (row["amount"] or 0) >= _PRESENT[medium]:
                found.append(Found(video.video_id, video.name, [row["t"]],
                                   f"{row['amount']:.0f} {_UNITS[medium]}: {row['sample'] or ''}"[:160],
                                   float(row["amount"])))
        return sorted(found, key=lambda f: -f.score)

    def by_words(self, text: str, ctx: ToolContext) -> list[Found]:
        """Videos that say or show a word the question names (a topic of their speech, a line
        of their on-screen text), with the times the graph cites."""
        found = []
        for video in self.videos:
            graph = graph_tool.index(_for_video(ctx, video))
            asked = META.sub(" ", text)
            nodes = [graph.nodes[n] for n, weight in graph.seeds(asked).items()
                     if graph.nodes[n]["kind"] in _WORDS and weight >= 0.5]
            if nodes:
                hits = graph.search(asked, k=self.k)
                found.append(Found(video.video_id, video.name,
                                   sorted({n["t_start"] for n in nodes}),
                                   f"says or shows {', '.join(repr(n['name']) for n in nodes)}: "
                                   + " | ".join(graph_tool.said(h) for h in hits), len(nodes),
                                   [n["name"] for n in nodes]))
        return sorted(found, key=lambda f: -f.score)

    def by_search(self, text: str, ctx: ToolContext) -> list[Found]:
        """The videos whose graph or episodic memory best match, best first."""
        found = []
        for video in self.videos:
            hits = graph_tool.search(text, _for_video(ctx, video), k=2)
            episodes = [e for e in (self.store.search(text, kind="episodic", video_id=video.video_id,
                                                      k=1) if self.store is not None else [])
                        if (e.similarity or 0.0) >= MIN_SIMILARITY]
            score = max([h.score * 10 for h in hits] + [e.similarity or 0.0 for e in episodes],
                        default=0.0)
            lines = [graph_tool.said(h) for h in hits] + [e.text for e in episodes]
            times = [h.t_start for h in hits] + [e.times[0] for e in episodes if e.times]
            if lines:
                found.append(Found(video.video_id, video.name, times, " | ".join(lines), score))
        return sorted(found, key=lambda f: -f.score)[:self.k]


def _for_video(ctx: ToolContext, video: VideoEntry) -> ToolContext:
    return ToolContext(video_id=video.video_id, db_path=video.db_path, memory_folder=video.folder,
                       llm=ctx.llm, embed=ctx.embed, usage=ctx.usage)


def _row(found: Found) -> dict:
    return {"video_id": found.video_id, "name": found.name, "times": found.times[:5]}


def _observed_kinds(asked: KindQuestion, found: list[Found], unsure: list[Found],
                    videos: int) -> Observation:
    what = (f"{asked.kind} ({asked.comparison} {asked.n} at once)" if asked.operation == "most_at_once"
            else f"a {asked.kind}")
    if found:
        value = f"{len(found)} of {videos} videos show {what}: {_names(found)}"
    else:
        value = f"None of the {videos} videos shows {what}"
    lines = [value + ".", *(f.line() for f in found)]
    if unsure:
        lines.append("Not counted, since their detector could not name what moved in them: "
                     + "; ".join(f"{f.name} (video {f.video_id})" for f in unsure) + ".")
    return Observation(text="\n".join(lines), value=value, support="computed",
                       rows=[_row(f) for f in found],
                       times=[t for f in found for t in f.times[:1]])


# "In which video is somebody talking" asks for speech, "which clip shows a sign" for text on
# screen, not for people or signs as kinds: the routing words of one video's questions, unless
# the question quotes what is said or shown (then the graph's word nodes answer it).
_PRESENCE_SQL = {
    "speech": "SELECT SUM(t_end - t_start) AS amount, MIN(t_start) AS t, "
              "(SELECT text FROM speech ORDER BY t_end - t_start DESC LIMIT 1) AS sample FROM speech",
    "screen_text": "SELECT COUNT(*) AS amount, MIN(t) AS t, "
                   "(SELECT text FROM ocr GROUP BY text ORDER BY COUNT(*) DESC LIMIT 1) AS sample "
                   "FROM ocr"}
# Below these a transcript or a reading is more likely noise (Whisper's "Thank you." on wind).
_PRESENT = {"speech": 3.0, "screen_text": 2}
_UNITS = {"speech": "s of speech", "screen_text": "reads of on-screen text"}


def _observed_actions(done: set[str], found: list[Found], videos: int) -> Observation:
    what = " or ".join(sorted(done))
    if not found:
        said = f"None of the {videos} videos shows anyone {what}"
        return Observation(text=f"{said} (actions read from body keypoints and the objects at "
                                "hand).", support="computed", value=said)
    return Observation(text=f"{len(found)} of {videos} videos show someone {what}:\n"
                            + "\n".join(f.line() for f in found),
                       support="computed", value=_names(found), rows=[_row(f) for f in found],
                       times=[t for f in found for t in f.times[:1]])


def _presence_asked(question: str) -> str | None:
    chosen = routing.route(question)
    if chosen and chosen[0] in _PRESENCE_SQL and not routing.quoted_words(question):
        return chosen[0]
    return None


def _observed_presence(medium: str, found: list[Found], videos: int) -> Observation:
    what = "speech (somebody talking)" if medium == "speech" else "text on screen"
    if found:
        value = f"{len(found)} of {videos} videos have {what}, most first: {_names(found)}"
    else:
        value = f"None of the {videos} videos has {what}"
    return Observation(text="\n".join([value + ".", *(f.line() for f in found)]), value=value,
                       support="computed", rows=[_row(f) for f in found],
                       times=[t for f in found for t in f.times[:1]])


def _names(found: list[Found]) -> str:
    return "; ".join(f"{f.name} (video {f.video_id})" + (f" from {f.times[0]:.1f} s" if f.times else "")
                     for f in found)


def _observed_words(found: list[Found], videos: int) -> Observation:
    words = ", ".join(repr(w) for w in dict.fromkeys(w for f in found for w in f.words))
    value = f"{len(found)} of {videos} videos say or show {words}: {_names(found)}"
    return Observation(text="\n".join([value + ".", *(f.line() for f in found)]),
                       value=value, support="computed", rows=[_row(f) for f in found],
                       times=[t for f in found for t in f.times[:1]])
