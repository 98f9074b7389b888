"""Tracker adapter + track cleaning: synthetic unit tests, and the real model on MOT15 TUD-Campus."""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import pytest

from backend.config import load as load_settings
from backend.ingest.tracks import (INTERPOLATED, ExitSplitter, clean_tracks, count_summary,
                                   drop_cut_off, drop_doubles, fill_gaps, relabel)
from models.types import Detection

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MEMORYREEL_SHARED", REPO.parent / "shared"))
TUD_VIDEO = SHARED / "videos" / "mot15_TUD-Campus.mp4"
TUD_GT = SHARED / "videos" / "ground-truth" / "TUD-Campus" / "gt.txt"

FPS = 5.0


def _walk(track_id, k0, k1, x0=100.0, vx=10.0, y=100.0, w=50.0, h=120.0):
    """Detections of one person walking right, sampled frames k0..k1-1 at FPS."""
    return [(k, Detection(track_id, "person", (x0 + vx * (k - k0), y, x0 + vx * (k - k0) + w, y + h), 0.8))
            for k in range(k0, k1)]


def _frames(*walks, n=30):
    per = defaultdict(list)
    for walk in walks:
        for k, det in walk:
            per[k].append(det)
    return [(k, k / FPS, per[k]) for k in range(n)]


def test_fragmented_track_is_merged():
    # Person 1 tracked for frames 0-9, lost for 2 samples (0.6 s gap), re-found as id 7 where its
    # motion predicts; person 2 elsewhere in the frame for the whole clip.
    a = _walk(1, 0, 10, x0=100)
    b = _walk(7, 12, 30, x0=100 + 10 * 12)
    other = _walk(2, 0, 30, x0=400, vx=0, y=300)
    mapping = clean_tracks(_frames(a, b, other), FPS, min_seconds=0.5)
    assert mapping[1] == mapping[7] == 1  # first appearance, leftmost
    assert mapping[2] == 2
    assert count_summary(relabel(_frames(a, b, other), mapping))["distinct"] == 2


def test_short_blip_is_dropped():
    main = _walk(1, 0, 30)
    blip = _walk(5, 14, 15, x0=500, y=300)  # one frame mid-video: 0.2 s < 0.5 s
    mapping = clean_tracks(_frames(main, blip), FPS, min_seconds=0.5)
    assert mapping == {1: 1}


def test_overlapping_tracks_are_not_merged():
    # Two people walking side by side: ids 1 and 2 both visible in frames 10-14.
    a = _walk(1, 0, 15, x0=100)
    b = _walk(2, 10, 30, x0=100 + 10 * 10 + 20)
    mapping = clean_tracks(_frames(a, b), FPS, min_seconds=0.5)
    assert mapping == {1: 1, 2: 2}


def test_far_or_different_size_fragments_are_not_merged():
    a = _walk(1, 0, 10, x0=100)
    far = _walk(2, 11, 30, x0=600)                      # re-appears far away
    small = _walk(3, 11, 30, x0=200, w=20, h=50)        # near but much smaller box
    late = _walk(4, 25, 30, x0=200)                     # near but 3 s later
    mapping = clean_tracks(_frames(a, far, small, late), FPS, min_seconds=0.5)
    assert len(set(mapping.values())) == 4


def test_a_briefly_hidden_person_is_filled_in_and_a_long_absence_is_not():
    # Person 1 hidden behind someone for 2 samples (0.4 s), then away for 10 samples (2 s).
    seen = [(k, det) for k, det in _walk(1, 0, 30) if k not in (5, 6) and not 15 <= k < 25]
    filled = fill_gaps(_frames(seen), max_gap_s=1.0)
    at = {k: dets for k, _, dets in filled}
    assert [d.confidence for d in at[5] + at[6]] == [INTERPOLATED, INTERPOLATED]
    # Halfway along the walk: the box between its neighbours' boxes.
    assert at[5][0].box[0] == _walk(1, 0, 30)[5][1].box[0]
    assert all(not at[k] for k in range(15, 25))
    off = fill_gaps(_frames(seen), max_gap_s=0)
    assert all(d.confidence != INTERPOLATED for _, _, dets in off for d in dets)


def test_a_person_wholly_behind_another_is_not_in_view_and_a_partly_hidden_one_is():
    # Person 1 stands still; person 2, nearer and larger, stands in front of them for samples
    # 4-6, covering them wholly; person 3 stands half behind person 4 for the same samples.
    hidden = [(k, d) for k, d in _walk(1, 0, 10, x0=100, vx=0) if k not in (4, 5, 6)]
    front = [(k, Detection(2, "person", (80.0, 80.0, 180.0, 240.0), 0.9)) for k in (4, 5, 6)]
    half = [(k, d) for k, d in _walk(3, 0, 10, x0=400, vx=0) if k not in (4, 5, 6)]
    other = [(k, Detection(4, "person", (425.0, 80.0, 520.0, 240.0), 0.9)) for k in (4, 5, 6)]
    filled = {k: dets for k, _, dets in fill_gaps(_frames(hidden, front, half, other, n=10), 2.5)}
    assert [sorted(d.track_id for d in filled[k]) for k in (4, 5, 6)] == [[2, 3, 4]] * 3


def test_a_person_who_steps_out_at_the_edge_is_not_filled_in():
    # Seen at the left edge, gone for 0.6 s, seen again there: out of view, not hidden.
    seen = [(k, det) for k, det in _walk(1, 0, 10, x0=0, vx=0) if k not in (4, 5, 6)]
    inside = [(k, det) for k, det in _walk(2, 0, 10, x0=300) if k not in (4, 5, 6)]
    filled = {k: dets for k, _, dets in fill_gaps(_frames(seen, inside), 1.0, size=(640, 480))}
    assert [d.track_id for k in (4, 5, 6) for d in filled[k]] == [2, 2, 2]


def test_a_gap_is_not_filled_with_someone_else():
    # Id 1 is a near person (box 120 px tall) until 0.8 s; after 1 s without it, the tracker gives
    # the id to a far person (70 px tall) walking the other way. Nobody walked in between: the
    # gap stays empty. The same person, re-found at their own size, is filled as before.
    near = [(k, det) for k, det in _walk(1, 0, 5, x0=200, h=120.0)]
    far = [(k, det) for k, det in _walk(1, 10, 15, x0=260, vx=-10, h=70.0)]
    same = [(k, det) for k, det in _walk(2, 0, 15, x0=400) if not 5 <= k < 10]
    filled = {k: dets for k, _, dets in fill_gaps(_frames(near + far, same), 2.5, size=(640, 480))}
    assert [d.track_id for k in range(5, 10) for d in filled[k]] == [2] * 5


def _passers_by_under_one_id():
    """Id 1 found at samples 0, 5 and 12 near x = 300, each time on someone walking past there
    (the association revived a lost id on whoever came by); person 2 walks past at 5, person 3
    at 12, their own ids held throughout."""
    ghost = [(k, Detection(1, "person", (300.0 + k, 100.0, 350.0 + k, 220.0), 0.8))
             for k in (0, 5, 12)]
    two = [(k, det) for k, det in _walk(2, 2, 8, x0=270) if k != 5]
    three = _walk(3, 9, 15, x0=270)
    return _frames(ghost, two, three, n=15)


def test_an_id_revived_on_passers_by_is_not_filled_in():
    at = {k: dets for k, _, dets in fill_gaps(_passers_by_under_one_id(), 2.5, size=(640, 480))}
    # Seen in 3 of the 13 samples it spans: nobody was hidden at x = 300 for 2 s.
    assert not [d for k in range(15) for d in at[k] if d.track_id == 1 and d.confidence == INTERPOLATED]
    # Person 2, missed once while held, is still filled in.
    assert [d.track_id for d in at[5] if d.confidence == INTERPOLATED] == [2]
    # A parked car the detector finds as rarely is still there in between: only people's ids
    # are revived on passers-by that way, as measured.
    parked = [(k, Detection(4, "car", (300.0, 300.0, 420.0, 380.0), 0.8)) for k in (0, 5, 12)]
    at_car = {k: dets for k, _, dets in fill_gaps(_frames(parked, n=15), 2.5, size=(640, 480))}
    assert all(at_car[k] for k in range(13))


def test_a_revived_id_on_someone_already_counted_is_dropped():
    at = {k: dets for k, _, dets in
          drop_doubles(fill_gaps(_passers_by_under_one_id(), 2.5, size=(640, 480)))}
    # At 5 and 12 its box lies on person 2 (filled in) and person 3 (seen): one person each.
    assert sorted(d.track_id for d in at[5]) == [2]
    assert sorted(d.track_id for d in at[12]) == [3]
    # At 0 nobody else is there: that box is the only sighting of whoever passed, and stays.
    assert [d.track_id for d in at[0]] == [1]


def test_edge_track_kept_and_renumbered_by_first_appearance():
    # A track cut by the start of the clip is kept even if shorter than min_seconds.
    edge = _walk(9, 0, 2, x0=300)
    later = _walk(3, 5, 30, x0=50)
    first = _walk(4, 0, 30, x0=10, y=300)
    mapping = clean_tracks(_frames(edge, later, first), FPS, min_seconds=0.5)
    assert mapping == {4: 1, 9: 2, 3: 3}


def _first_sighting(walk):
    """The walk with its first box marked as the association reports it: a start not yet
    confirmed."""
    (k, first), *rest = walk
    return [(k, replace(first, first_sighting=True)), *rest]


def test_a_track_starts_where_it_was_first_seen_and_a_lone_start_is_noise():
    main = _walk(1, 0, 30)
    arriving = _first_sighting(_walk(2, 10, 30, x0=400, y=300))
    lone = _first_sighting(_walk(3, 29, 30, x0=50, y=300))  # seen once at the clip's end
    frames = _frames(main, arriving, lone)
    mapping = clean_tracks(frames, FPS, min_seconds=0.5)
    assert mapping == {1: 1, 2: 2}
    kept = relabel(frames, mapping)
    assert min(t for _, t, dets in kept for d in dets if d.track_id == 2) == 10 / FPS


def test_a_start_counts_towards_when_not_whether():
    # Seen 3 samples (0.6 s) with its start, 2 confirmed (0.4 s): noise, as before starts were kept.
    brief = _first_sighting(_walk(2, 10, 13, x0=400, y=300))
    assert clean_tracks(_frames(_walk(1, 0, 30), brief), FPS, min_seconds=0.5) == {1: 1}


def test_an_unconfirmed_start_never_stretches_someone_elses_exit():
    leaving = _walk(1, 0, 10, x0=100)
    # A stray start where person 1's motion predicts them 0.4 s after they were last seen.
    stray = _first_sighting(_walk(5, 12, 13, x0=100 + 10 * 12))
    frames = _frames(leaving, stray, _walk(2, 0, 30, x0=400, vx=0, y=300))
    kept = relabel(frames, clean_tracks(frames, FPS, min_seconds=0.5))
    assert max(t for _, t, dets in kept for d in dets if d.track_id == 1) == 9 / FPS


def test_an_id_revived_after_its_object_stepped_out_belongs_to_someone_new():
    size = (640, 480)
    split = ExitSplitter(size, fresh_from=1000)
    leaving = [(k, Detection(3, "person", (max(0.0, 100 - 30 * k), 100, 150 - 30 * k, 320), 0.9))
               for k in range(5)]                            # walks out at the left edge
    newcomer = [(k, Detection(3, "person", (2 + 8 * (k - 26), 110, 32 + 8 * (k - 26), 290), 0.7))
                for k in range(26, 30)]                      # the tracker's id, 4.4 s later
    hidden = [(k, Detection(4, "person", (300, 100, 350, 300), 0.9)) for k in (0, 1, 9, 10)]
    frames = _frames(leaving, newcomer, hidden)
    renamed = [(i, t, split(t, dets)) for i, t, dets in frames]
    ids = {(k, d.box[0] < 200): d.track_id for k, _, dets in renamed for d in dets}
    assert {ids[(k, True)] for k in range(5)} == {3}
    assert {ids[(k, True)] for k in range(26, 30)} == {1000}
    assert {ids[(k, False)] for k in (0, 1, 9, 10)} == {4}  # hidden mid-picture: the same person
    # Nor does linking join them: the newcomer is an arrival, not person 3 coming back.
    relinked = _frames(leaving, [(k, replace(d, track_id=8)) for k, d in newcomer])
    mapping = clean_tracks(relinked, FPS, min_seconds=0.5, max_gap_s=5.0, size=size)
    assert mapping[3] != mapping[8]


def _sample_indices(n_frames: int, native_fps: float, fps: float) -> list[int]:
    step = native_fps / fps if 0 < fps < native_fps else 1.0
    out, k = [], 0
    while int(round(k * step)) < n_frames:
        out.append(int(round(k * step)))
        k += 1
    return out


def _tracker(runtime: str, cache_dir: Path):
    from backend.config import load
    from models.tracker import Tracker

    settings = load()
    return Tracker(weights=settings.detector_weights, imgsz=settings.detector_imgsz,
                   conf=settings.detector_conf, iou=settings.detector_nms_iou,
                   device=settings.device, runtime=runtime,
                   cache_dir=cache_dir)


@pytest.fixture(scope="module")
def detector_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("detector-cache")  # one ONNX export for this module


@pytest.fixture(scope="module")
def tud(detector_cache):
    """tud(runtime) -> (tracker, [(frame, seconds, detections)] at the sampled frames), run once."""
    import decord

    assert TUD_VIDEO.exists() and TUD_GT.exists(), f"MOT15 clip missing under {SHARED}"
    vr = decord.VideoReader(str(TUD_VIDEO))
    native = vr.get_avg_fps()
    indices = _sample_indices(len(vr), native, FPS)
    done = {}

    def run(runtime: str):
        if runtime not in done:
            tracker = _tracker(runtime, detector_cache)
            done[runtime] = tracker, [(i, i / native, tracker.track(vr[i].asnumpy())) for i in indices]
        return done[runtime]
    return run


def _tud_truth() -> dict[int, set[int]]:
    gt = defaultdict(set)
    for line in TUD_GT.read_text().splitlines():
        f, pid = line.split(",")[:2]
        gt[int(f) - 1].add(int(pid))
    return gt


@pytest.mark.parametrize("runtime", ["torch", "onnx"])
def test_tud_campus_counts_match_ground_truth(tud, runtime):
    tracker, frames = tud(runtime)
    assert tracker.runtime == runtime
    assert all(d.category == "person" for _, _, dets in frames for d in dets)
    mapping = clean_tracks(frames, FPS, load_settings().min_track_seconds)
    got = count_summary(relabel(frames, mapping))

    gt = _tud_truth()
    per = [len(gt[i]) for i, _, _ in frames]
    truth = {"first_frame": per[0], "max_simultaneous": max(per),
             "distinct": len(set().union(*(gt[i] for i, _, _ in frames)))}
    assert truth == {"first_frame": 6, "max_simultaneous": 6, "distinct": 8}

    # Tolerance +-1 on each figure: TUD-Campus is a crowded group walking in partial occlusion;
    # one GT person (id 6) is mostly hidden behind others and visible for only 0.36 s, and at the
    # input sizes that run in real time on a 2-core CPU the detector finds it only intermittently.
    # An off-by-one is within what the detector itself gets right; being off by 2+ (the untuned
    # pipeline gave 9 / 9 / 18) means duplicates or fragments are leaking through.
    for key in truth:
        assert abs(got[key] - truth[key]) <= 1, (key, got, truth)

    import decord

    tracker.reset()  # a new video starts from id 1 again
    again = tracker.track(decord.VideoReader(str(TUD_VIDEO))[0].asnumpy())
    assert again and min(d.track_id for d in again) == 1


def test_someone_mostly_out_of_the_picture_is_not_counted(tud):
    # TUD-Campus: people step in at the left and out at both sides. The detector boxes the
    # sliver still in view; MOT15's annotators count someone only once about half of them is in.
    _, frames = tud("onnx")
    kept = fill_gaps(relabel(frames, clean_tracks(frames, FPS, load_settings().min_track_seconds,
                                                  size=(640, 480))),
                     load_settings().fill_gap_seconds, (640, 480))
    trimmed = drop_cut_off(kept, (0.0, 640.0))
    truth = _tud_truth()

    def wrong(frames_):
        return sum(abs(len(dets) - len(truth[i])) for i, _, dets in frames_)

    dropped = [d for (_, _, a), (_, _, b) in zip(kept, trimmed) for d in a if d not in b]
    assert dropped and all(d.box[0] <= 6.4 or d.box[2] >= 633.6 for d in dropped)
    assert all((d.box[2] - d.box[0]) / (d.box[3] - d.box[1]) < 0.25 for d in dropped)
    # Measured: 8 people miscounted over the 15 frames, 3 after: a person hidden in the group,
    # and two samples where someone stands wholly behind another's box, whom MOT15's truth
    # counts and the product's rule (in view = some part visible) does not.
    assert wrong(trimmed) <= 3 < wrong(kept), (wrong(kept), wrong(trimmed))


def test_a_box_is_cut_off_by_the_picture_not_by_the_frame():
    walker = [(k, Detection(1, "person", (200 + 20 * k, 100, 250 + 20 * k, 220), 0.9)) for k in range(10)]
    # Someone stepping in at the left edge of a pillarboxed picture (160..480): two slivers,
    # then in full view; a thin box of the same shape mid-picture; someone seen only as a sliver.
    entering = [(k, Detection(2, "person", (160, 100, 175 if k < 2 else 210, 220), 0.8)) for k in range(5)]
    middle = [(k, Detection(3, "person", (300, 260, 315, 380), 0.8)) for k in range(3)]
    passing = [(k, Detection(4, "person", (465, 100, 480, 220), 0.8)) for k in range(6, 9)]
    frames = _frames(walker, entering, middle, passing, n=10)
    trimmed = drop_cut_off(frames, (160.0, 480.0))
    seen = {(k, d.track_id) for k, _, dets in trimmed for d in dets}
    assert (0, 2) not in seen and (1, 2) not in seen and (2, 2) in seen
    assert {(k, 3) for k in range(3)} <= seen and {(k, 4) for k in range(6, 9)} <= seen
    assert len(seen) == sum(len(dets) for _, _, dets in frames) - 2
    assert drop_cut_off(frames, (0.0, 640.0)) == frames  # no edge there


def test_someone_walking_in_is_timed_from_the_sample_they_were_first_seen(tud):
    # TUD-Campus: the last of its 8 people comes into view 1.8 s in. The association confirms a
    # track on its second sighting; timed from there, that arrival read 2.4 s. From the sighting
    # that started the track it reads 2.0 s here; a sample either way is the detector's jitter.
    _, frames = tud("onnx")
    assert any(d.first_sighting for _, _, dets in frames for d in dets)
    kept = relabel(frames, clean_tracks(frames, FPS, load_settings().min_track_seconds))
    firsts = defaultdict(lambda: float("inf"))
    for _, t, dets in kept:
        for d in dets:
            firsts[d.track_id] = min(firsts[d.track_id], t)
    truth = max(min(i for i, ids in _tud_truth().items() if pid in ids) for pid in
                set().union(*_tud_truth().values())) / 25
    assert truth == pytest.approx(1.8, abs=0.05)
    assert abs(max(firsts.values()) - truth) <= 2 / FPS + 1e-6


def test_onnx_counts_people_per_frame_no_worse_than_torch(tud):
    gt = _tud_truth()

    def count_error(runtime: str) -> float:
        _, frames = tud(runtime)
        return sum(abs(len(dets) - len(gt[i])) for i, _, dets in frames) / len(frames)

    # Here the two runtimes give the same counts, so "no worse" was a tie that one box's
    # rounding on another CPU could break. The same network, rounded differently, may flip one
    # borderline box in one frame; a real fault (another letterbox, threshold or model) misses
    # or adds people in many frames.
    one_box_in_one_frame = 1 / len(tud("torch")[1])
    assert count_error("onnx") <= count_error("torch") + one_box_in_one_frame


def _iou(a, b) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union


def test_onnx_and_torch_detect_the_same_boxes(detector_cache):
    # The same network and the same letterbox: only float rounding may differ.
    import decord

    torch_tracker, onnx_tracker = _tracker("torch", detector_cache), _tracker("onnx", detector_cache)
    compared = 0
    for name, frames in (("mot15_TUD-Campus.mp4", (0, 35, 70)),
                         ("intel_one-by-one-person-detection.mp4", (150, 600, 1100))):
        vr = decord.VideoReader(str(SHARED / "videos" / name))
        for i in frames:
            frame = vr[i].asnumpy()
            want = sorted(torch_tracker.track(frame), key=lambda d: d.box)
            got = sorted(onnx_tracker.track(frame), key=lambda d: d.box)
            assert len(got) == len(want), (name, i, got, want)
            for g, w in zip(got, want):
                assert _iou(g.box, w.box) > 0.99 and abs(g.confidence - w.confidence) < 0.01, (g, w)
            compared += len(want)
        torch_tracker.reset(), onnx_tracker.reset()
    assert compared >= 10  # people were in those frames: the comparison compared something


def test_onnx_export_is_made_once_and_reused(detector_cache):
    first = _tracker("onnx", detector_cache)
    exported = first.weights_path
    assert exported.parent == detector_cache / "detector-onnx" and exported.suffix == ".onnx"
    made = exported.stat().st_mtime_ns
    assert _tracker("auto", detector_cache).weights_path == exported
    assert exported.stat().st_mtime_ns == made
    assert "ONNX Runtime" in first.name


def test_auto_falls_back_to_torch_and_onnx_says_why(caplog):
    # /proc cannot hold the export: `auto` runs PyTorch and logs why; `onnx` refuses.
    from models.weights import WeightsError

    with caplog.at_level("WARNING"):
        tracker = _tracker("auto", Path("/proc/no/cache"))
    assert tracker.runtime == "torch" and "cannot create cache folder" in caplog.text
    with pytest.raises(WeightsError, match="cannot create cache folder"):
        _tracker("onnx", Path("/proc/no/cache"))


@pytest.mark.parametrize("heights, long_side, expected", [
    ([], 640, 640),                      # nobody seen: the base size
    ([150.0, 160.0, 170.0], 640, 640),   # as on TUD-Campus: 192 px tall only at 640 or more
    ([240.0, 250.0, 200.0], 640, 576),   # 220 px of 640 -> 192 px at 559, rounded up to 32
    ([100.0] * 4, 768, 992),             # 100 px of 768 -> 128 px at 983, rounded up to 32
    ([40.0, 45.0, 50.0, 300.0], 640, 1280),  # the smaller ones decide, up to the largest
    ([364.0] * 4, 768, 416),             # 364 px of 768 -> 192 px at 405, rounded up to 32
    ([600.0, 620.0, 640.0], 640, 320),   # down to the smallest, no further
])
def test_the_input_size_brings_the_smaller_people_to_the_target_height(heights, long_side,
                                                                       expected):
    from models.tracker import input_size
    assert input_size(heights, long_side, base=640, largest=1280, smallest=320) == expected


def test_a_video_that_opens_on_nobody_is_sized_by_the_people_it_shows_later(detector_cache):
    # The one-by-one clip opens on an empty room; the people who walk in later fill
    # most of its height, so the detector needs less than its base size to find them.
    from backend.ingest import decode

    video = SHARED / "videos" / "intel_one-by-one-person-detection.mp4"
    meta = decode.probe(video)
    indices = decode.sample_indices(meta, FPS)
    opening = list(decode.frames_at(video, meta, indices[:3]).values())
    later = decode.spread_frames(video, meta, indices, 4)
    tracker = _tracker("onnx", detector_cache)
    assert tracker.fit(opening, 1280, 320) == 640                  # nobody to size by
    size = tracker.fit(opening, 1280, 320, later=lambda: later)
    assert 320 <= size < 640
    # At that size the detector still finds everyone it finds at 640 on those frames.
    at_base, at_size = ([len(people) for people in tracker._people_heights(later, imgsz)]
                        for imgsz in (640, size))
    assert at_size == at_base and sum(at_size) >= 3
    tracker.reset()
    assert tracker.imgsz == 640


def test_a_detector_sets_up_alone_while_another_thread_sets_up_its_own(detector_cache):
    # CPython 3.11's AST conversion, which ultralytics' setup uses to read the export's
    # metadata, is not thread-safe: the frame pass's two detectors must not set up at once.
    import threading

    import numpy as np

    from models import detector_onnx

    tracker = _tracker("onnx", detector_cache)
    frame = np.zeros((240, 320, 3), dtype=np.uint8)
    setting_up = detector_onnx.first_call(tracker.model)
    setting_up.acquire()   # another detector is setting up
    worker = threading.Thread(target=tracker.track, args=(frame,))
    worker.start()
    worker.join(timeout=2.0)
    assert worker.is_alive()            # waits for it
    setting_up.release()
    worker.join(timeout=60.0)
    assert not worker.is_alive()
    with detector_onnx.first_call(tracker.model):  # set up: later calls take no lock
        assert not setting_up.locked()
