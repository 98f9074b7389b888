"""Ingest these videos, then ask these questions: what `bench agent`, `bench memory` and `eval`
share.

Each video is ingested once (the library keeps it, so a later run finds it without decoding),
and one that fails to ingest is recorded against its questions instead of stopping the run.
Each question is asked with its caller's settings and memory options, learning done right after
the answer but timed apart, and comes back as `Outcome`: the figures every command reports. An
answer's fields are read in one place, `read_answer`, so a change to `Answer` changes one function.
Each command keeps its own extras (eval's run folder and resume, bench memory's configurations,
bench agent's percentiles).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from backend.answer import Answer, Cost
from backend.config import Settings
from backend.memory.replay import MemoryOptions

log = logging.getLogger(__name__)

# ask_fn has the signature of backend.ask.ask and returns an Answer; ingest_fn(path, settings)
# returns the library's video id. Tests inject fakes.
AskFn = Callable[..., object]
IngestFn = Callable[[Path, Settings], str]


@dataclass(frozen=True)
class AnswerFigures:
    """What the commands report of one answer; None where the answer does not say."""
    option: int | None
    text: str | None
    answered: bool
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0
    other_seconds: float = 0.0
    cached_tokens: int = 0           # of prompt_tokens, from the server's cache
    prompt_seconds: float = 0.0      # of llm_seconds, reading prompts (0: the server did not say)
    learn_calls: int = 0
    learn_prompt_tokens: int = 0
    learn_completion_tokens: int = 0
    learn_llm_seconds: float = 0.0
    learn_verdict: str | None = None
    learned_entry: bool = False      # learning wrote a memory entry
    replayed_kinds: tuple[str | None, ...] = ()
    decided_kind: str | None = None  # the kind of replayed entry the answer rests on
    k_s: int | None = None
    k_p: int | None = None
    complexity: float | None = None
    confidence: str | None = None
    basis: str | None = None
    tree_size: int = 0
    format_failures: int = 0
    tree: tuple[dict, ...] = ()      # the planner's nodes, for the failure class and the path
    chosen_leaves: tuple[int, ...] = ()
    parametric: dict | None = None   # what the distilled model said, where it was asked


@dataclass(frozen=True)
class Outcome:
    """One question asked: its figures, or the error that stopped it (then `figures` is None)."""
    video_id: str | None
    figures: AnswerFigures | None
    seconds: float                   # question to answer, learning excluded
    learn_seconds: float = 0.0       # learning's wall-clock seconds, after the answer
    error: str | None = None


def files_in(videos: Path, names: Iterable[str]) -> dict[str, Path]:
    """The benches' question files name videos by file name in one folder."""
    return {name: videos / name for name in dict.fromkeys(names)}


def ingest_videos(files: dict[str, Path], settings: Settings,
                  ingest_fn: IngestFn | None = None) -> dict[str, str | Exception]:
    """Video name (as the question file gives it) -> library id, or the error its ingest raised."""
    ingest_fn = ingest_fn or _default_ingest
    return {name: _try_ingest(ingest_fn, path, settings) for name, path in files.items()}


def _try_ingest(ingest_fn: IngestFn, path: Path, settings: Settings) -> str | Exception:
    try:
        return ingest_fn(path, settings)
    except Exception as e:  # recorded against each of the video's questions
        log.warning("ingest of %s failed: %s", path, e)
        return e


def ask_one(video_id: str | Exception, question: str, options: list[str] | None,
            settings: Settings, *, n_solutions: int | None = None,
            memory: MemoryOptions | None = None, ask_fn: AskFn | None = None) -> Outcome:
    """Ask one question and learn from the answer; any failure is an `Outcome` with its error."""
    ask_fn = ask_fn or _default_ask
    started = time.monotonic()
    try:
        if isinstance(video_id, Exception):
            raise RuntimeError(f"ingest failed: {type(video_id).__name__}: {video_id}")
        answer = ask_fn(video_id, question, settings, options=options, n_solutions=n_solutions,
                        memory=memory, learn_now=False)
        answered_at = time.monotonic()
        answer.learn()
        learned_at = time.monotonic()
        figures = read_answer(answer)
    except Exception as e:  # any failure is a result: recorded, counted wrong, never dropped
        log.warning("question %r failed: %s", question, e)
        return Outcome(video_id=None if isinstance(video_id, Exception) else video_id,
                       figures=None, seconds=time.monotonic() - started,
                       error=f"{type(e).__name__}: {e}")
    return Outcome(video_id=video_id, figures=figures, seconds=answered_at - started,
                   learn_seconds=learned_at - answered_at)


def read_answer(answer: Answer) -> AnswerFigures:
    """The one place that reads an Answer's fields (usage, memory trace, confidence, tree)."""
    memory = answer.memory
    learned = memory.learned
    learn_usage = (learned and learned.usage) or Cost()
    confidence = answer.confidence
    leaves = [n for n in answer.tree if n.get("failure") is not None or n.get("answer") is not None]
    return AnswerFigures(
        option=answer.option, text=answer.answer, answered=bool(answer.answered),
        llm_calls=answer.usage.llm_calls, prompt_tokens=answer.usage.prompt_tokens,
        completion_tokens=answer.usage.completion_tokens,
        llm_seconds=answer.usage.llm_seconds, other_seconds=answer.usage.other_seconds or 0.0,
        cached_tokens=answer.usage.cached_tokens, prompt_seconds=answer.usage.prompt_seconds,
        learn_calls=learn_usage.llm_calls, learn_prompt_tokens=learn_usage.prompt_tokens,
        learn_completion_tokens=learn_usage.completion_tokens,
        learn_llm_seconds=learn_usage.llm_seconds,
        learn_verdict=learned.verdict if learned else None,
        learned_entry=bool(learned and learned.entry_id),
        replayed_kinds=tuple(r.kind for r in memory.replayed),
        decided_kind=memory.decided_by.kind if memory.decided_by else None,
        # With memory off the trace holds no figures: report none rather than zeros.
        k_s=memory.k_s if memory.enabled else None, k_p=memory.k_p if memory.enabled else None,
        complexity=memory.complexity if memory.enabled else None,
        confidence=confidence.level if confidence else None,
        basis=confidence.basis if confidence else None, tree_size=len(answer.tree),
        format_failures=sum(1 for n in leaves if (n.get("failure") or "").startswith("bad format")),
        tree=tuple(answer.tree), chosen_leaves=tuple(answer.chosen_leaves),
        parametric=memory.parametric)


def start_llm(settings: Settings) -> None:
    """Start the embedded LLM server before the first question and read the prompts' openings
    into it, as the app does at start (backend/warm_up.py): neither is any answer's time."""
    from backend.ask import check_llm
    from backend.warm_up import warm_up

    check_llm(settings)
    warm_up(settings)


def _default_ask(*args, **kwargs):
    from backend.ask import ask
    return ask(*args, **kwargs)


def _default_ingest(path: Path, settings: Settings) -> str:
    from backend.ingest.pipeline import ingest
    return ingest(path, settings).video_id
