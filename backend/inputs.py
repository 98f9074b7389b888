"""What a person types (a question, its options, a number of candidate answers, a SQL query),
checked here once, so that the app and the command line refuse the same things with the same
words, before any model, file or database sees them."""

from __future__ import annotations

import re

from backend.errors import InputError, MemoryReelError

# The range of candidate answers (MCTS solutions) the app's Settings slider has always offered,
# so that the command line cannot ask for more than the app can.
MIN_SOLUTIONS, MAX_SOLUTIONS = 1, 6
# Longer questions would crowd the evidence out of the model's context (the embedded server holds
# 8192 tokens, its prompts and evidence most of them) and come back as the server's HTTP 400.
MAX_QUESTION_CHARS = 1000
MAX_OPTIONS_CHARS = 2000


def check_text(text: str, what: str, error: type[MemoryReelError] = InputError) -> None:
    """Refuse text holding lone surrogates: a command-line argument that was not UTF-8 reaches
    Python that way ('\\udcff'), and so can a JSON string sent to the app. No tokenizer or
    SQLite can encode it, and each fails with its own misleading message."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise error(f"{what} is not valid UTF-8 text: it holds bytes that are not characters "
                    "(check the terminal's or the file's encoding).") from None


def check_question(video_id: str | None, question: str | None) -> None:
    if not video_id:
        raise InputError("Pick a video from the library (or upload one) before asking.")
    if not question or not question.strip():
        raise InputError("Type a question first.")
    check_text(question, "The question")
    check_length(question)


def check_length(question: str) -> None:
    """Refuse a question too long for the model's context, before any model sees it."""
    if len(question) > MAX_QUESTION_CHARS:
        raise InputError(f"The question is {len(question)} characters long; the limit is "
                         f"{MAX_QUESTION_CHARS}. Ask one thing at a time.")


def parse_options(text: str | None) -> list[str] | None:
    """Multiple-choice options, one per line or separated by '|'; None for an open question."""
    if not text or not text.strip():
        return None
    check_text(text, "The text of the options")
    if len(text) > MAX_OPTIONS_CHARS:
        raise InputError(f"The options are {len(text)} characters long; the limit is "
                         f"{MAX_OPTIONS_CHARS}.")
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
