"""`python -m backend ...` with a fault at one ingest stage, for tests/test_faults.py.

    python tests/stage_hook.py pause STAGE -- ingest CLIP --json
    python tests/stage_hook.py fill STAGE FILLER -- ingest CLIP --json

The real command line and the real ingest run; only ingest's progress callback is wrapped, so
the fault lands at a known point without a timing guess. At STAGE (half-way through the frames,
at the start of any other stage):
- `pause` says `stage-hook: paused at STAGE` on stderr and stops there, for a test to kill it;
- `fill` writes FILLER until its filesystem is full, says `stage-hook: disk full at STAGE`,
  and lets the ingest go on into the full disk.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import backend.ingest.pipeline  # noqa: E402 - after the repository is on the path
from backend import cli  # noqa: E402


def reached(stage: str, name: str, done: int, total: int) -> bool:
    if name != stage:
        return False
    # The frames stage reports every frame: stop in its middle, where its work is under way.
    return done >= max(1, total // 2) if name == "frames" else done == 0


def pause(stage: str) -> None:
    print(f"stage-hook: paused at {stage}", file=sys.stderr, flush=True)
    threading.Event().wait()  # until the test kills this process


def fill(stage: str, filler: Path) -> None:
    with open(filler, "ab", buffering=0) as f:
        try:
            while f.write(b"\0" * 65536):
                pass
        except OSError:
            pass  # full: what the ingest meets next
    print(f"stage-hook: disk full at {stage}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    split = argv.index("--")
    action, stage, *extra = argv[:split]
    fault = (lambda: pause(stage)) if action == "pause" else (lambda: fill(stage, Path(extra[0])))
    real_ingest = backend.ingest.pipeline.ingest
    fired = threading.Event()

    def ingest(path, settings, progress=None, models=None):
        def hooked(name: str, done: int, total: int) -> None:
            if not fired.is_set() and reached(stage, name, done, total):
                fired.set()
                fault()
            if progress is not None:
                progress(name, done, total)
        return real_ingest(path, settings, progress=hooked, models=models)

    backend.ingest.pipeline.ingest = ingest  # the CLI imports it when the command runs
    return cli.main(argv[split + 1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
