"""`bench memory`: does memory make answers cheaper without making them worse?

Three passes over a NExT-QA-layout question file, in one process, with an empty memory folder
of their own:
1. memory on, the questions as written (memory starts empty and learns);
2. memory on, the questions reworded (replays what pass 1 learned);
3. memory off, the same reworded questions (the baseline for pass 2).
The rewording is rule-based and deterministic (synonyms and a lead-in), so every run asks the
same questions.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Callable

from backend.config import Settings
from backend.memory.replay import MemoryOptions

_SYNONYMS = [
    ("how many", "what number of"), ("people", "persons"), ("different", "distinct"),
    ("in view", "visible"), ("at the same time", "simultaneously"), ("appear", "show up"),
    ("video", "clip"), ("says", "utters"), ("say", "utter"), ("word", "term"),
    ("shown", "displayed"), ("screen", "display"), ("come to", "walk up to"),
    ("one after another", "in turn"), ("ever", "at any point"), ("most of", "the majority of"),
    ("first", "opening"), ("direction", "way"), ("walk", "move"), ("cars", "vehicles"),
]
_SWAP = re.compile(r"\b(" + "|".join(re.escape(old) for old, _ in
                                     sorted(_SYNONYMS, key=lambda s: -len(s[0]))) + r")\b")
_LEAD_INS = ["tell me, {q}", "{q}, please", "i would like to know: {q}"]


def reword(question: str, index: int) -> str:
    """The same question in other words: synonyms swapped and a lead-in added."""
    text = question.strip().rstrip("?").lower()
    # One pass, so a replacement is never replaced again.
    text = _SWAP.sub(lambda m: dict(_SYNONYMS)[m.group(0)], text)
    return _LEAD_INS[index % len(_LEAD_INS)].format(q=text) + "?"


def memory_bench(questions: Path, videos: Path, settings: Settings, n_solutions: int | None = None,
                 limit: int | None = None, progress: Callable[[str], None] = print) -> dict:
    from backend.agent.ask import ask
    from backend.bench import read_questions
    from backend.ingest import ingest

    rows = read_questions(questions)[:limit]
    video_ids = {name: ingest(videos / name, settings).video_id
                 for name in dict.fromkeys(r["video"] for r in rows)}
    reworded = [reword(r["question"], i) for i, r in enumerate(rows)]
    with tempfile.TemporaryDirectory(prefix="memoryreel-bench-memory-") as tmp:
        settings = replace(settings, memory_dir=tmp)
        passes = {}
        for name, texts, memory in (("first pass, memory on", [r["question"] for r in rows],
                                     MemoryOptions()),
                                    ("reworded, memory on", reworded, MemoryOptions()),
                                    ("reworded, memory off", reworded, MemoryOptions.off())):
            results = []
            for row, text in zip(rows, texts):
                answer = ask(video_ids[row["video"]], text, settings, options=row["options"],
                             n_solutions=n_solutions, memory=memory)
                learned = answer.memory.get("learned", {}).get("usage", {})
                results.append({
                    "qid": row["qid"], "video": row["video"], "question": text,
                    "correct": answer.option == row["answer"],
                    "answer_calls": answer.usage["llm_calls"],
                    "answer_tokens": answer.usage["prompt_tokens"] + answer.usage["completion_tokens"],
                    "learn_calls": learned.get("llm_calls", 0),
                    "learn_tokens": learned.get("prompt_tokens", 0) + learned.get("completion_tokens", 0),
                    "replayed": len(answer.memory.get("replayed", [])),
                    "verdict": answer.memory.get("learned", {}).get("verdict", "off")})
                r = results[-1]
                progress(f"{name}: {row['video']} q{row['qid']} {'right' if r['correct'] else 'wrong'}, "
                         f"{r['answer_calls']} calls / {r['answer_tokens']} tokens answering, "
                         f"{r['learn_calls']} learning, {r['replayed']} replayed, {r['verdict']}")
            passes[name] = {"summary": _summary(results), "results": results}
    return {"questions": len(rows), "n_solutions": n_solutions or settings.n_solutions,
            "passes": passes}


def _summary(results: list[dict]) -> dict:
    n = len(results)

    def mean(key: str) -> float:
        return round(sum(r[key] for r in results) / n, 2)
    return {"accuracy": round(sum(r["correct"] for r in results) / n, 3),
            "correct": sum(r["correct"] for r in results),
            "answer_calls": mean("answer_calls"), "answer_tokens": mean("answer_tokens"),
            "learn_calls": mean("learn_calls"), "learn_tokens": mean("learn_tokens"),
            "replayed": mean("replayed"),
            "valid": sum(r["verdict"] == "valid" for r in results)}
