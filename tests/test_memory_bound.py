"""Decoding streams: peak memory does not grow with the length of the video."""

from __future__ import annotations

import json
import subprocess
import sys

from backend.evaluation.ingest_runs import concat_copies
from tests.conftest import REPO, clip

_CHILD = """
import json, resource, sys
from pathlib import Path
from backend.ingest import decode
path = Path(sys.argv[1])
meta = decode.probe(path)
n = sum(1 for _ in decode.iter_frames(path, meta, decode.sample_indices(meta, 5.0)))
print(json.dumps({"frames": n, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _peak(path) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path)], cwd=REPO, capture_output=True,
                          text=True, timeout=600, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_peak_memory_of_frame_sampling_is_flat_in_video_length(tmp_path):
    source = clip("intel_car-detection.mp4")
    longer = tmp_path / "car-x6.mp4"
    concat_copies(source, longer, 6)
    once, six_times = _peak(source), _peak(longer)
    assert six_times["frames"] >= 5.5 * once["frames"]
    # Holding every sampled frame would add ~1 MB per frame (768x432 RGB): 500+ MB here.
    assert six_times["peak_mb"] < once["peak_mb"] * 1.15 + 20, (once, six_times)
