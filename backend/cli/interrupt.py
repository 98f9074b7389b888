"""Ctrl-C ends a command, whatever the libraries it runs do with the KeyboardInterrupt."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, raised by our handler instead of Python's own.

    CPython remembers a plain KeyboardInterrupt that passed through code an extension ran with
    PyRun_String as unhandled, whoever caught it after, and `python -m` then ends by sending
    itself SIGINT: status -2 after our message instead of 130, about one Ctrl-C in three
    mid-ingest. It compares the exception's class exactly, so a subclass is not remembered.
    """


_pressed = threading.Event()


def _unraisable(hook):
    """`hook`, except that our Interrupted raised in a `__del__` or a weakref callback is not
    printed as "Exception ignored ... Traceback": `check` raises it again where it can end the
    command, and the user sees our one-line message only."""
    def quiet(unraisable) -> None:
        if not isinstance(unraisable.exc_value, Interrupted):
            hook(unraisable)
    return quiet


def _on_sigint(signum, frame) -> None:
    _pressed.set()
    raise Interrupted


@contextlib.contextmanager
def handled():
    """While a command runs, Ctrl-C raises Interrupted and is remembered for `check`."""
    # Only the main thread may set a handler (a test may call main from another); and a shell
    # starts background jobs with SIGINT ignored, so that Ctrl-C spares them: they keep it so.
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is signal.SIG_IGN):
        yield
        return
    _pressed.clear()
    previous = signal.signal(signal.SIGINT, _on_sigint)
    previous_hook, sys.unraisablehook = sys.unraisablehook, _unraisable(sys.unraisablehook)
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        # None: the handler was set outside Python; the default is the nearest we can restore.
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)


def check() -> None:
    """Raise Interrupted if Ctrl-C was pressed. An exception raised in a `__del__` (the regex
    module's, mid-ingest) is printed and dropped, and the command would run on to its end:
    long commands call this at every step they report."""
    if _pressed.is_set():
        raise Interrupted
