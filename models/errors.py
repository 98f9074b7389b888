"""One base for every model failure, so the CLI and the app catch model faults in one place.

Under `ModelError`: `models.llm.LLMError` (and its subclasses: unavailable, timeout, bad reply,
refused), raised by chat models and captioners, and `models.weights.WeightsError`, raised when a
model's files cannot be found, assembled or exported. Backend errors have their own base,
`backend.errors.MemoryReelError`; a message under either base is meant for the user.
"""


class ModelError(Exception):
    """Base of every model failure; str(error) says what went wrong and what to do."""
