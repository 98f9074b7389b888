"""Question files in the layouts of the public VideoQA benchmarks, read into one `Question` shape.

- NExT-QA (`video, frame_count, width, height, question, answer, qid, type, a0..a4`; `answer` is
  the index of the right option; videos are named by id) and our `dev-qa.csv` (the same columns
  less the frame facts, `video` is a file name).
- IntentQA (`video_id` instead of `video`, plus columns such as `action`, `lemma`, `lemma_id`).
- NExT-GQA-style files whose `answer` is the text of the right option instead of its index.
- MSRVTT-QA (JSON list of `{video_id, id, question, answer, category_id}`, or CSV/JSONL with
  `video`/`video_id`, `question`, `answer`, `type`/`category`): no options, so open-ended.

Extra columns are ignored. Videos are found with `resolve_video`: through an optional id -> file
map (NExT-QA's `map_vid_vidorID.json`, or a CSV), then as `DIR/<name>`, `DIR/<name>.<any video
extension>` and, for numeric MSRVTT ids, `DIR/video<id>.<ext>`.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

from backend.errors import InputError, NotFoundError
from backend.library import VIDEO_EXTENSIONS

_VIDEO_KEYS = ("video", "video_id", "video_name", "vid")
_QID_KEYS = ("qid", "question_id", "id")
_TYPE_KEYS = ("type", "question_type", "qtype", "category")
_OPTION_LIST_KEYS = ("options", "choices", "candidates")
_OPTION_COLUMN = re.compile(r"^a(\d+)$")
# MSRVTT-QA gives only a numeric category; its questions start with one of these words.
_WH_WORDS = ("what", "who", "how", "when", "where", "which", "why")


@dataclass(frozen=True)
class Question:
    key: str                        # unique in the file: "<video>/<qid>"; resume goes by it
    video: str                      # as the file names it: a file name or an id
    qid: str
    type: str                       # the file's type code (NExT-QA CW, TN, DC...; MSRVTT what...)
    question: str
    options: tuple[str, ...] | None  # None: open-ended
    answer: int | None              # index of the right option (multiple choice)
    answer_text: str                # the right answer as text

    @property
    def multiple_choice(self) -> bool:
        return self.options is not None


def read_questions(path: Path) -> list[Question]:
    """Every question of a CSV, TSV, JSON or JSONL annotation file, in file order."""
    path = Path(path)
    if not path.is_file():
        raise NotFoundError(f"question file '{path}' does not exist.")
    rows = _rows(path)
    if not rows:
        raise InputError(f"{path} holds no questions.")
    questions = [_question(row, number, path) for number, row in enumerate(rows, start=1)]
    seen: dict[str, int] = {}
    for number, q in enumerate(questions, start=1):
        if q.key in seen:
            raise InputError(f"{path}: row {number} repeats question '{q.key}' of row {seen[q.key]}.")
        seen[q.key] = number
    return questions


def _rows(path: Path) -> list[dict]:
    suffix = path.suffix.lower()
    with open(path, newline="", encoding="utf-8-sig") as f:
        if suffix in (".csv", ".tsv"):
            return list(csv.DictReader(f, delimiter="\t" if suffix == ".tsv" else ","))
        if suffix == ".jsonl":
            lines = [line for line in f if line.strip()]
            try:
                return [json.loads(line) for line in lines]
            except json.JSONDecodeError as e:
                raise InputError(f"{path} is not valid JSON Lines: {e}") from e
        if suffix == ".json":
            try:
                data = json.load(f)
            except json.JSONDecodeError as e:
                raise InputError(f"{path} is not valid JSON: {e}") from e
            return _json_rows(data, path)
    raise InputError(f"{path}: question files must be .csv, .tsv, .json or .jsonl.")


def _json_rows(data, path: Path) -> list[dict]:
    if isinstance(data, dict):
        for key in ("questions", "data", "annotations"):
            if isinstance(data.get(key), list):
                return data[key]
        # {qid: {...}}: the key is the question id.
        if all(isinstance(v, dict) for v in data.values()):
            return [{"qid": k, **v} for k, v in data.items()]
    if isinstance(data, list) and all(isinstance(r, dict) for r in data):
        return data
    raise InputError(f"{path}: expected a list of question objects.")


def _first(row: dict, keys: tuple[str, ...]):
    for key in keys:
        value = row.get(key)
        if value is not None and str(value).strip() != "":
            return value
    return None


def _question(row: dict, number: int, path: Path) -> Question:
    where = f"{path.name} row {number}"
    text = _first(row, ("question",))
    video = _first(row, _VIDEO_KEYS)
    if text is None or video is None:
        raise InputError(f"{where}: needs a question and a video ({' or '.join(_VIDEO_KEYS)}).")
    text = str(text).strip()
    video = str(video).strip()
    qid = _first(row, _QID_KEYS)
    qid = str(number if qid is None else qid).strip()
    options = _options(row)
    raw_answer = row.get("answer")
    if raw_answer is None or str(raw_answer).strip() == "":
        raise InputError(f"{where}: no answer.")
    if options is None:
        answer, answer_text = None, str(raw_answer).strip()
    else:
        answer = _option_index(raw_answer, options, where)
        answer_text = options[answer]
    kind = _first(row, _TYPE_KEYS)
    kind = str(kind).strip() if kind is not None else _wh_word(text)
    return Question(key=f"{video}/{qid}", video=video, qid=qid, type=kind, question=text,
                    options=options, answer=answer, answer_text=answer_text)


def _options(row: dict) -> tuple[str, ...] | None:
    listed = _first(row, _OPTION_LIST_KEYS)
    if isinstance(listed, list):
        return tuple(str(o).strip() for o in listed)
    numbered = sorted((int(m.group(1)), key) for key in row
                      if (m := _OPTION_COLUMN.match(str(key))))
    options = []
    for expected, (index, key) in enumerate(numbered):
        value = row[key]
        if index != expected or value is None or str(value).strip() == "":
            break
        options.append(str(value).strip())
    return tuple(options) if options else None


def _option_index(raw, options: tuple[str, ...], where: str) -> int:
    text = str(raw).strip()
    if re.fullmatch(r"\d+", text):
        index = int(text)
        if index < len(options):
            return index
        raise InputError(f"{where}: answer {index} but only {len(options)} options.")
    lowered = [o.lower() for o in options]
    if text.lower() in lowered:       # NExT-GQA gives the right option's text
        return lowered.index(text.lower())
    raise InputError(f"{where}: answer '{text}' is neither an option index nor an option.")


def _wh_word(question: str) -> str:
    words = question.lower().split()
    return next((w for w in words[:3] if w in _WH_WORDS), "other")


def read_video_map(path: Path) -> dict[str, str]:
    """id -> file name: a JSON object, or a CSV whose first row is a header (id, file)."""
    path = Path(path)
    if not path.is_file():
        raise NotFoundError(f"video map '{path}' does not exist.")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except json.JSONDecodeError as e:
            raise InputError(f"{path} is not valid JSON: {e}") from e
        if not isinstance(data, dict):
            raise InputError(f"{path}: expected a JSON object of id -> file name.")
        return {str(k).strip(): str(v).strip() for k, v in data.items()}
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))[1:]
    if any(len(r) < 2 for r in rows if r):
        raise InputError(f"{path}: every row needs two columns, id and file name.")
    return {r[0].strip(): r[1].strip() for r in rows if r}


def resolve_video(name: str, videos: Path, video_map: dict[str, str] | None = None) -> Path:
    """The video file a question names; NotFoundError lists what was tried."""
    target = (video_map or {}).get(name, name)
    exact = videos / target
    if exact.is_file():
        return exact
    stems = [target] + ([f"video{target}"] if target.isdigit() else [])
    for stem in stems:
        folder = (videos / stem).parent
        if folder.is_dir():
            found = sorted(p for p in folder.iterdir() if p.stem == Path(stem).name
                           and p.suffix.lower() in VIDEO_EXTENSIONS and p.is_file())
            if found:
                return found[0]
    tried = ", ".join(f"{videos / s}.*" for s in stems)
    raise NotFoundError(f"no video file for '{name}' in {videos} (tried {exact}, {tried}); "
                        "give --video-map for files named otherwise.")


def choice_rows(path: Path) -> list[dict]:
    """The multiple-choice questions of a file, as the benches ask them."""
    return [{"video": q.video, "qid": q.qid, "type": q.type, "question": q.question,
             "options": list(q.options), "answer": q.answer} for q in read_questions(path)
            if q.options]


def question_labels(path: Path) -> dict[tuple[str, str], dict]:
    """(video, qid) -> the workload's `truth`, `need` and `half` columns, where the file has
    them."""
    if Path(path).suffix.lower() not in (".csv", ".tsv"):
        return {}
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f, delimiter="\t" if Path(path).suffix.lower() == ".tsv" else ",")
        return {(r["video"].strip(), r["qid"].strip()): {"truth": r.get("truth") or "",
                                                         "need": r.get("need") or "",
                                                         "half": r.get("half") or ""}
                for r in reader if r.get("video") and r.get("qid")}
