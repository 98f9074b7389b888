"""What a person types (a question, its options, a number of candidate answers), checked here
once, so that the app and the command line refuse the same things with the same words, before
any model, file or database sees them."""

from __future__ import annotations

import re

from backend.errors import InputError

# The range of candidate answers (MCTS solutions) the app's Settings slider has always offered,
# so that the command line cannot ask for more than the app can.
MIN_SOLUTIONS, MAX_SOLUTIONS = 1, 6


def check_question(video_id: str | None, question: str | None) -> None:
    if not video_id:
        raise InputError("Pick a video from the library (or upload one) before asking.")
    if not question or not question.strip():
        raise InputError("Type a question first.")


def parse_options(text: str | None) -> list[str] | None:
    """Multiple-choice options, one per line or separated by '|'; None for an open question."""
    if not text or not text.strip():
        return None
    options = [o.strip() for o in re.split(r"[\n|]", text) if o.strip()]
    if len(options) < 2:
        raise InputError("Give at least two options (one per line, or separated by '|'), or "
                         "none for an open question.")
    return options


def check_solutions(n: float) -> int:
    """The number of candidate answers, as a whole number within the range offered."""
    if n != int(n) or not MIN_SOLUTIONS <= n <= MAX_SOLUTIONS:
        raise InputError(f"The number of candidate answers must be a whole number from "
                         f"{MIN_SOLUTIONS} to {MAX_SOLUTIONS}, not {n:g}.")
    return int(n)
