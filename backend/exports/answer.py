"""One answer, as `python -m backend ask ... --json` printed it, as Markdown or JSON.

Both carry the question, the answer, its confidence, the evidence steps with their times, key
frames at those times (the frames the app's gallery shows, boxes drawn) and the planner tree.
Markdown links its key frames as JPEG files in a folder beside it, by relative paths, so the
file and its folder can be moved, zipped or committed together.

An answer file is checked against what exporting reads (pydantic); anything else it holds (cost,
memory) is kept as it is in the JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Annotated
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from backend.errors import ExportError
from backend.exports import read_only, target
from backend.ingest import frames
from backend.library import VideoEntry

# Enough to see the evidence unfold; more makes the Markdown a photo album.
MAX_KEY_FRAMES = 8
_TREE_TEXT = 160
# A planner node is one step of one question, at most an LLM call each: real trees hold tens.
# The Markdown indents a node two spaces a level, so a chain grows with the square of its length
# (an edited file's 20,001-node chain became 404 MB); a thousand nodes stay under a megabyte.
MAX_TREE_NODES = 1_000
_ASK = "`python -m backend ask VIDEO_ID QUESTION --json`"


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")


# A time in an answer file is a number of seconds: NaN or infinity would reach frame seeking.
Seconds = Annotated[float, Field(allow_inf_nan=False)]


class Step(_Record):
    node: int
    tool: str
    input: str
    observation: str
    times: list[Seconds] = []
    instance_ids: list[int] = []
    sql: str = ""


class Node(_Record):
    id: int
    parent: int | None = None
    thought: str = ""
    action: str = ""
    action_input: str = ""
    observation: str = ""
    reward: Seconds = 0.0
    visits: int = 0
    answer: str | None = None
    failure: str | None = None
    children: list[int] = []


class Confidence(_Record):
    level: str = "none"
    explanation: str = ""


class AnswerFile(_Record):
    video_id: str
    question: str
    standalone_question: str = ""
    options: list[str] | None = None
    answer: str
    option: int | None = None
    times: list[Seconds] = []
    instance_ids: list[int] = []
    confidence: Confidence = Confidence()
    evidence: list[Step]
    tree: Annotated[list[Node], Field(max_length=MAX_TREE_NODES)]
    chosen_leaves: list[int] = []

    @model_validator(mode="after")
    def _a_tree(self) -> "AnswerFile":
        """Node ids are distinct and every chain of parents ends: an edited file whose tree has a
        cycle would have the export nest nodes without end."""
        parents = {n.id: n.parent for n in self.tree}
        if len(parents) != len(self.tree):
            raise ValueError("the planner tree repeats a node id")
        for start in parents:
            seen, at = set(), start
            while at in parents:
                if at in seen:
                    raise ValueError(f"the planner tree has a cycle through node {at}")
                seen.add(at)
                at = parents[at]
        return self

    def evidence_times(self) -> list[float]:
        return sorted({*self.times, *(t for step in self.evidence for t in step.times)})


@dataclass(frozen=True)
class KeyFrame:
    frame: int
    t: float
    in_view: list[int]
    image: str = ""   # its path relative to the export; '' where no image was written


def load(text: str, name: str) -> AnswerFile:
    """The answer in an answer file's text; `name` names the file in errors."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ExportError(f"'{name}' is not JSON ({e.msg}, line {e.lineno}): export needs the "
                          f"output of {_ASK} saved to a file.") from None
    except RecursionError:
        raise ExportError(f"'{name}' nests its JSON too deeply to read (lists or objects inside "
                          f"one another thousands of levels down): it is no answer from "
                          f"{_ASK}.") from None
    return parse(data, name)


def parse(data: object, name: str) -> AnswerFile:
    if isinstance(data, dict) and {"error", "kind"} <= data.keys() and "answer" not in data:
        raise ExportError(f"'{name}' records a failed ask ({data['kind']}: {data['error']}), "
                          "not an answer.")
    try:
        return AnswerFile.model_validate(data)
    except ValidationError as e:
        wrong = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'the file'}: {err['msg']}"
                          for err in e.errors()[:3])
        raise ExportError(f"'{name}' is not an answer from {_ASK}: {wrong}.") from None


def check_video(answer: AnswerFile, entry: VideoEntry) -> None:
    if answer.video_id != entry.video_id:
        raise ExportError(f"The answer is about video {answer.video_id}, not {entry.video_id}: "
                          f"export it with video id {answer.video_id}.")


def key_frames(answer: AnswerFile, entry: VideoEntry) -> list[KeyFrame]:
    """The frames at the answer's evidence times (the video's key frames if it gave none)."""
    picks = frames.frames_at_times(entry, answer.evidence_times(), MAX_KEY_FRAMES)
    with read_only(entry) as db:
        fps = next(db.query("SELECT fps FROM video"))["fps"] or 1.0
        return [KeyFrame(frame, round(frame / fps, 2), [r["instance_id"] for r in db.query(
            "SELECT instance_id FROM detections WHERE frame = ? ORDER BY instance_id", [frame])])
            for frame in picks]


def write(answer: AnswerFile, entry: VideoEntry, out: Path, fmt: str) -> list[Path]:
    """Write the export to `out` and its key frames as JPEGs into `<out stem>_frames/` beside
    it; returns every file written, `out` first."""
    picked = key_frames(answer, entry)
    folder = out.with_name(f"{out.stem}_frames")
    folder.mkdir(parents=True, exist_ok=True)
    images = frames.annotated_frames(entry, [k.frame for k in picked],
                                     highlight=set(answer.instance_ids))
    written, shown = [], []
    for k in picked:
        path = folder / f"frame_{k.frame:06d}.jpg"
        images[k.frame].save(path, quality=90)
        written.append(path)
        shown.append(replace(k, image=f"{folder.name}/{path.name}"))
    target.write(out, render(answer, entry.name, shown, fmt).encode("utf-8"))
    return [out, *written]


def render(answer: AnswerFile, video_name: str, picked: list[KeyFrame], fmt: str) -> str:
    return markdown(answer, video_name, picked) if fmt == "md" else \
        as_json(answer, video_name, picked)


def as_json(answer: AnswerFile, video_name: str, picked: list[KeyFrame]) -> str:
    shown = [{k: v for k, v in asdict(frame).items() if v != ""} for frame in picked]
    return json.dumps({"video": {"id": answer.video_id, "name": video_name},
                       **answer.model_dump(mode="json", exclude_unset=True), "key_frames": shown},
                      indent=2, ensure_ascii=False) + "\n"


def markdown(answer: AnswerFile, video_name: str, picked: list[KeyFrame]) -> str:
    lines = [f"# {_inline(answer.question)}", ""]
    if answer.standalone_question and answer.standalone_question.strip() != answer.question.strip():
        lines += [f"Understood as: {_inline(answer.standalone_question)}", ""]
    lines += [f"**Answer:** {_inline(_shown_answer(answer))}", ""]
    if answer.confidence.level != "none":
        lines += [f"**Confidence:** {answer.confidence.level}: "
                  f"{_inline(answer.confidence.explanation)}", ""]
    lines += [f"**Video:** {_inline(video_name)} (`{answer.video_id}`)"
              + (f"; evidence at {_times(answer.times)}" if answer.times else ""), ""]
    lines += _evidence(answer.evidence) + _frames(picked) + _tree(answer)
    return "\n".join(lines).rstrip() + "\n"


def _shown_answer(answer: AnswerFile) -> str:
    if answer.options and answer.option is not None and 0 <= answer.option < len(answer.options):
        return f"{chr(65 + answer.option)}. {answer.options[answer.option]}"
    return answer.answer


def _evidence(steps: list[Step]) -> list[str]:
    lines = ["## Evidence", ""]
    if not steps:
        lines += ["No tool step led to this answer.", ""]
    for i, step in enumerate(steps, start=1):
        lines += [f"### {i}. {_inline(step.tool)} (node {step.node})", "",
                  f"Input: {_inline(step.input)}", ""]
        facts = ([f"Times: {_times(step.times)}"] if step.times else []) + \
            ([f"Objects: {', '.join(f'#{i}' for i in step.instance_ids)}"]
             if step.instance_ids else [])
        if facts:
            lines += ["; ".join(facts), ""]
        lines += [*_fenced(step.observation, "text"), ""]
        if step.sql:
            lines += [*_fenced(step.sql, "sql"), ""]
    return lines


def _frames(picked: list[KeyFrame]) -> list[str]:
    lines = ["## Key frames", ""]
    for k in picked:
        caption = f"{_seconds(k.t)}, frame {k.frame}, " + (
            "in view: " + ", ".join(f"#{i}" for i in k.in_view) if k.in_view else "nothing tracked")
        if k.image:
            lines += [f"![{caption}]({quote(k.image)})", ""]
        lines += [caption, ""]
    return lines


def _tree(answer: AnswerFile) -> list[str]:
    """Every planner node, nested under its parent, the chosen answers marked."""
    nodes = {n.id: n for n in answer.tree}
    children: dict[int | None, list[int]] = {}
    for n in answer.tree:
        children.setdefault(n.parent if n.parent in nodes else None, []).append(n.id)
    lines = ["## Planner tree", ""]
    stack = [(node_id, 0) for node_id in reversed(children.get(None, []))]
    while stack:
        node_id, depth = stack.pop()
        lines.append("  " * depth + "- " + _node_line(nodes[node_id], answer.chosen_leaves))
        stack += [(c, depth + 1) for c in reversed(children.get(node_id, []))]
    return lines + [""]


def _node_line(node: Node, chosen: list[int]) -> str:
    if node.answer is not None:
        what = f"answer: {node.answer}"
    elif node.failure:
        what = f"failed: {node.failure}"
    elif node.action:
        first = node.observation.splitlines()[0] if node.observation else ""
        what = f"{node.action}({node.action_input}) -> {first}"
    else:
        what = node.thought
    return (f"**[{node.id}]** {_inline(_cut(what))} (reward {node.reward:.2f}, "
            f"{node.visits} visits){' **chosen**' if node.id in chosen else ''}")


def _seconds(t: float) -> str:
    return f"{t:.1f} s"


def _times(times: list[float], shown: int = 12) -> str:
    return ", ".join(_seconds(t) for t in times[:shown]) + (" …" if len(times) > shown else "")


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _TREE_TEXT else text[:_TREE_TEXT - 1] + "…"


def _inline(text: str) -> str:
    """Text shown as itself in a Markdown line, not as formatting."""
    return re.sub(r"([\\`*_\[\]<>#|~])", r"\\\1", " ".join(str(text).split()))


def _fenced(text: str, language: str) -> list[str]:
    """A code block that no run of backticks inside `text` can close early."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return [fence + language, text.rstrip("\n"), fence]
