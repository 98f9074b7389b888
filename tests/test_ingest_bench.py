"""`bench ingest`: the stage budget, its table side by side, and the joined long video."""

from __future__ import annotations

from backend.cli.bench import stage_table
from backend.evaluation.ingest_runs import join_clips, stage_budget
from backend.ingest import decode
from tests.conftest import clip


def _figures(seconds: dict[str, float], duration: float) -> dict:
    return {"budget": stage_budget(seconds), "total_s": seconds["total"], "duration_s": duration,
            "realtime_factor": duration / seconds["total"], "cpu_s": 50.0, "peak_rss_mb": 1700.0}


def test_stage_budget_groups_stage_seconds_and_keeps_the_rest_as_other():
    budget = stage_budget({"frames.decode": 2.0, "frames.track": 10.0, "frames.pose": 1.0,
                           "frames.objects": 5.0, "frames.beside.scenes": 0.5, "scenes": 0.5,
                           "describe": 1.0, "embed": 2.0, "frames": 20.0, "hash": 0.5,
                           "total": 30.0})
    # What ran beside the person tracker is in no stage: only the wait for it would be.
    assert budget["people"] == 11.0 and budget["scenes"] == 0.5 and budget["memory"] == 3.0
    assert budget["other"] == 30.0 - 2 - 11 - 5 - 0.5 - 3
    assert sum(v for k, v in budget.items() if k != "total") == budget["total"] == 30.0


def test_stage_table_puts_runs_side_by_side_with_shares():
    fp32 = _figures({"frames.track": 26.0, "frames.objects": 20.0, "total": 65.0}, 139.4)
    int8 = _figures({"frames.track": 13.0, "frames.objects": 10.0, "total": 34.85}, 139.4)
    fp32["beside"], int8["beside"] = {"moving": 4.3}, {"moving": 4.0}
    table = stage_table([("fp32", fp32), ("int8", int8)]).splitlines()
    assert table[0].split() == ["stage", "fp32", "int8"]
    people = next(line for line in table if line.startswith("people"))
    assert people.split() == ["people", "26.0", "s", "40%", "13.0", "s", "37%"]
    assert next(line for line in table if line.startswith("(moving)")).split() == \
        ["(moving)", "4.3", "s", "4.0", "s"]
    assert next(line for line in table if line.startswith("realtime")).split()[1:] == \
        ["2.14x", "4.00x"]
    assert "peak RSS" in table[-1] and "1700 MB" in table[-1]


def test_joined_clips_reach_the_length_asked_in_one_size(tmp_path):
    target = tmp_path / "joined.mp4"
    seconds = join_clips([clip("mot15_TUD-Campus.mp4"), clip("mot15_TUD-Stadtmitte.mp4")], target,
                         minutes=0.25, size=(320, 240), fps=10.0)
    meta = decode.probe(target)
    assert seconds == 15.0
    assert (meta.width, meta.height) == (320, 240)
    assert abs(meta.duration - 15.0) < 0.5


def test_object_detector_runs_where_the_picture_changed_and_once_a_second():
    import numpy as np

    from backend.ingest.frame_pass import _changed

    still = np.zeros((54, 96), np.float32)
    corner = still.copy()
    corner[:9, :12] = 10.0  # one block of 48 changed by 10 grey levels
    last = (0.0, still, [])
    assert _changed(0.2, still, None, 4.0)  # the first frame
    assert not _changed(0.2, still, last, 4.0)
    assert _changed(0.2, corner, last, 4.0)
    assert _changed(1.0, still, last, 4.0)  # once a second, changed or not
    assert _changed(0.2, still, last, 0.0)  # 0: every frame
