"""Parametric memory: the library's checked facts distilled into a small model's weights
(MemVerse's third kind of memory), asked before the planner.

What it learns from: live semantic facts (kept after validation, not deleted) whose graph edge
no person deleted or corrected. Each fact becomes a few wordings of its question, the video
named, each followed by its answer with its times. A LoRA adapter on the 0.5B Qwen
(`models.distill`) is trained on those pairs and written as a llama.cpp GGUF LoRA beside the
memory, with a manifest of when, on how many pairs and from which facts.

What it may do: answer a question as it was trained to. Its answer decides only where it
agrees with a live checked fact that recall replayed for this very question (same time, words
and objects), so a fact deleted or edited since the distillation is masked at once, and the
next distillation drops it. It is asked only where neither a replayed typed query nor the
question's own words gave a computed first step: a value the tables compute outranks it.
Otherwise its answer is shown as "from the model's weights" and decides nothing (it stays out
of the planner's prompt, so it cannot lower accuracy). It is a cache of checked answers in
weights, not new perception.
"""

from __future__ import annotations

import json
import logging
import math
import re
import shutil
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from backend.agent.planner import PARAMETRIC, GivenStep
from backend.agent.tools import Observation
from backend.config import Settings
from backend.errors import InputError
from backend.graph import facts as graph_facts
from backend.library import Library
from backend.memory.store import MemoryStore
from backend.memory_records import MemoryEntry
from models.llm import ChatModel, LLMError, Usage

log = logging.getLogger(__name__)

SYSTEM = ("You remember checked answers about the videos of a library. Answer with the answer "
          "and its times only.")
_TIMES_SHOWN = 3
_AT = re.compile(r"\s*\(at [^)]*\)\s*$")
# Passes over the pairs: three taught the 0.5B 12 of 12 made-up facts in new wordings at
# batch 8 (models/distill.py, about 3.2 s a step on 2 cores); one more for margin.
_EPOCHS = 4
_BATCH = 8
# The default is four passes over the pairs; this is four passes over 10,000 of them, hours of
# training on a laptop CPU. `--steps 1000000000` was accepted and trained until killed.
MAX_STEPS = 5_000


@dataclass
class Manifest:
    """What the adapter was distilled from: shown by the inspector, checked before asking."""

    distilled_at: str
    base: str
    steps: int
    pairs: int
    seconds: float
    videos: dict[str, dict] = field(default_factory=dict)  # video id -> {"facts", "pairs", "at"}
    facts: list[str] = field(default_factory=list)         # the semantic entry ids used

    def as_dict(self) -> dict:
        return asdict(self)


def folder(settings: Settings) -> Path:
    return settings.memory_path / "parametric"


def adapter_path(settings: Settings) -> Path:
    return folder(settings) / "adapter.gguf"


def manifest(settings: Settings) -> Manifest | None:
    """The last distillation's manifest; None before the first (or after a broken one)."""
    path = folder(settings) / "manifest.json"
    if not path.is_file() or not adapter_path(settings).is_file():
        return None
    try:
        return Manifest(**json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, TypeError) as e:
        log.warning("parametric memory's manifest %s is unreadable (%s): not used", path, e)
        return None


def described(settings: Settings, video_id: str | None) -> str:
    """When the video (or, for None, the library) was last distilled and on how many pairs."""
    done = manifest(settings)
    if done is None:
        return "Not distilled yet (`python -m backend memory distill`)."
    if video_id is None:
        return (f"Distilled {done.distilled_at}: {done.pairs} pairs from {len(done.facts)} "
                f"checked facts of {len(done.videos)} videos, {done.steps} steps.")
    video = done.videos.get(video_id)
    if video is None:
        return f"This video's facts were not in the last distillation ({done.distilled_at})."
    return (f"This video distilled {video['at']}: {video['pairs']} pairs from "
            f"{video['facts']} checked facts.")


def unedited(facts: list[MemoryEntry], db_path: Path) -> list[MemoryEntry]:
    """The facts less those whose answer edge a person deleted or corrected in the video's graph,
    and those learnt again since for a question whose edge a person edited."""
    if not db_path.is_file():
        return facts
    edited, questions = graph_facts.in_doubt(db_path)
    return [f for f in facts
            if f.id not in edited and graph_facts.question_key(f.question) not in questions]


def checked_facts(store: MemoryStore, library: Library, video_id: str) -> list[MemoryEntry]:
    """A video's live semantic facts that a person left as they were."""
    return [f for f in unedited(store.list(kind="semantic", video_id=video_id),
                                library.get(video_id).db_path) if f.answer and f.question]


def prompt(video_name: str, question: str) -> str:
    """The one wording the model is asked in; training adds others around it."""
    return f'Video "{video_name}": {question.strip()}'


def said(fact: MemoryEntry) -> str:
    """A fact's answer as the model learns to say it: the answer and its first times."""
    times = [t for t in fact.times or [] if math.isfinite(t)][:_TIMES_SHOWN]
    at = f" (at {', '.join(f'{t:.1f}' for t in times)} s)" if times else ""
    return f"{fact.answer.strip()}{at}"


def wordings(video_name: str, question: str) -> list[str]:
    """The question as a user may type it: plain, lower-case without its mark, the video named
    first or last. Paraphrases with other words come from asking: every checked answer to a new
    wording is a fact of its own."""
    q = question.strip()
    bare = q.rstrip("?!. ").lower()
    return list(dict.fromkeys([prompt(video_name, q), prompt(video_name, bare),
                               f'{q} (video "{video_name}")',
                               f'In the video "{video_name}", {bare}?']))


def training_pairs(settings: Settings, video_ids: list[str] | None = None,
                   store: MemoryStore | None = None):
    """(pairs, per video {"facts", "pairs"}, fact ids) for these videos (default: all)."""
    from models.distill import Pair

    library = Library(settings.home)
    store = store or MemoryStore(settings)
    ids = video_ids or [v.video_id for v in library.list()]
    pairs, videos, used = [], {}, []
    for video_id in ids:
        name = library.get(video_id).name
        facts = checked_facts(store, library, video_id)
        made = [Pair(text, said(f)) for f in facts for text in wordings(name, f.question)]
        pairs += made
        used += [f.id for f in facts]
        videos[video_id] = {"facts": len(facts), "pairs": len(made)}
    return pairs, videos, used


def check_steps(steps: int | None) -> None:
    if steps is not None and not 1 <= steps <= MAX_STEPS:
        raise InputError(f"--steps is a number of training steps from 1 to {MAX_STEPS:,}, "
                         f"not {steps:,}.")


def distill(settings: Settings, video_ids: list[str] | None = None, steps: int | None = None,
            base: str = "0.5b", progress: Callable[[int, int], None] = lambda done, total: None,
            store: MemoryStore | None = None) -> Manifest:
    """Train the adapter on the checked facts of these videos (default: every video), write it
    as a GGUF LoRA for the embedded server, and record the manifest. A run stopped part-way
    resumes from its last checkpoint when started again on the same facts."""
    from models.distill import export_gguf_lora, train_lora
    from models.weights import qwen_gguf

    pairs, videos, used = training_pairs(settings, video_ids, store)
    if not pairs:
        raise InputError("Nothing to distill: no checked facts yet (ask questions first; "
                         "every validated answer becomes one).")
    check_steps(steps)
    steps = steps or min(MAX_STEPS, max(20, math.ceil(_EPOCHS * len(pairs) / _BATCH)))
    base_gguf = qwen_gguf(settings.cache_dir, base)
    out = folder(settings)
    started = time.monotonic()
    adapter = train_lora(base_gguf, pairs, out / "train", steps, system=SYSTEM,
                         batch_size=_BATCH, progress=progress)
    written = export_gguf_lora(adapter, base_gguf, out / "adapter.next.gguf")
    shutil.move(written, adapter_path(settings))  # a server never sees half a file
    at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    done = Manifest(distilled_at=at, base=base, steps=steps, pairs=len(pairs),
                    seconds=round(time.monotonic() - started, 1),
                    videos={v: {**n, "at": at} for v, n in videos.items()}, facts=used)
    (out / "manifest.json").write_text(json.dumps(done.as_dict(), indent=1), encoding="utf-8")
    return done


@dataclass
class Consulted:
    """What the distilled model said to one question, and whether a live fact backs it."""

    answer: str
    p: float                          # the model's probability of its own answer
    agreed: MemoryEntry | None        # the replayed live fact it agrees with, if any
    distilled_at: str
    usage: Usage

    def as_dict(self, decided: bool = False) -> dict:
        return {"answer": self.answer, "p": round(self.p, 3), "distilled_at": self.distilled_at,
                "agreed": self.agreed.id if self.agreed else None, "decided": decided}


def consult(model: ChatModel, video_name: str, question: str, facts: list[MemoryEntry],
            done: Manifest) -> Consulted | None:
    """Ask the distilled model; None when it cannot answer (the planner goes on without it)."""
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": prompt(video_name, question)}]
    try:
        reply = model.complete(messages, max_tokens=48, logprobs=True)
    except LLMError as e:
        log.warning("parametric memory did not answer: %s", e)
        return None
    answer = _AT.sub("", reply.text).strip()
    logprobs = reply.token_logprobs
    p = math.exp(sum(logprobs) / len(logprobs)) if logprobs else 0.0
    # Only facts the manifest was distilled from: a newer fact, or an edited one, is not in it.
    distilled = set(done.facts)
    agreed = next((f for f in facts if f.id in distilled and _same(f.answer, answer)), None)
    return Consulted(answer, p, agreed, done.distilled_at, reply.usage)


def _same(a: str, b: str) -> bool:
    def norm(text: str) -> str:
        return " ".join(re.sub(r"[^\w\s.]", " ", text.lower()).split()).rstrip(".")
    return bool(norm(a)) and norm(a) == norm(b)


def given_step(consulted: Consulted, question: str, min_p: float) -> GivenStep | None:
    """The planner's first step where the model agrees with a live fact confidently enough."""
    fact = consulted.agreed
    if fact is None or consulted.p < min_p:
        return None
    text = (f"From the model's weights (distilled {consulted.distilled_at}): "
            f"'{consulted.answer}' (p = {consulted.p:.2f}), the answer of the checked fact "
            f"{fact.id} to \"{fact.question}\", replayed for this question.")
    return GivenStep(tool=PARAMETRIC, tool_input=question,
                     thought="the distilled model answers as a live checked fact does",
                     observation=Observation(text=text, times=list(fact.times or []),
                                             value=fact.answer, support="read"),
                     replayed=fact.ref)
