"""Errors a user can act on. Their messages are shown as they are, in the CLI and in the app."""


class MemoryReelError(Exception):
    """Base class: the message says what went wrong and, where possible, what to do."""


class InputError(MemoryReelError):
    """The given file cannot be ingested (empty, not a video, truncated, unknown codec...)."""


class NotFoundError(MemoryReelError):
    """A video id that the library does not hold."""


class QueryError(MemoryReelError):
    """A SQL query was refused or failed; nothing was changed."""


class SettingsError(MemoryReelError):
    """An environment variable holds a value MemoryReel cannot use; the message names it."""


class DiskFullError(MemoryReelError):
    """The disk holding the library filled up during an ingest; nothing was added."""


class UsageError(MemoryReelError):
    """The command line itself is wrong (unknown command, missing or malformed argument)."""


class CaptionError(MemoryReelError):
    """The configured captioner failed; ingest stopped and added nothing to the library."""


class ExportError(MemoryReelError):
    """An export cannot be made: the answer file is not an `ask --json` answer, or the video
    lacks the tables the format is made from."""
