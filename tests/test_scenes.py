"""Shots, camera motion, colours and brightness: a real cut made by joining two shared clips,
synthetic pans, tilts and zooms of a still picture, solid-colour clips, and the agent's typed
`scene` query over what ingest wrote."""

from __future__ import annotations

import json
import sqlite3
from fractions import Fraction
from types import SimpleNamespace

import av
import numpy as np
import pytest
from PIL import Image

from backend import episodic
from backend.ingest import scenes
from backend.agent.queries import TypedQuery, VideoTables, run
from backend.ingest.pipeline import ingest
from backend.library import Library
from models.scenes import SceneAnalyser
from tests.conftest import clip, settings_for

_FPS = 25
_SIZE = (640, 360)
_FIRST_SECONDS = 3.0   # the cut: the first clip's frames end here
_STEP = 1 / 5          # the frame step ingest samples at (MEMORYREEL_TRACK_FPS = 5)


def _frames_of(name: str, seconds: float) -> list[np.ndarray]:
    """The clip's picture at every 1/25 s up to `seconds`, resized to _SIZE (RGB)."""
    timed = []
    with av.open(str(clip(name))) as container:
        for frame in container.decode(video=0):
            timed.append((float(frame.time), frame.to_image().convert("RGB").resize(_SIZE)))
    wanted = []
    for k in range(int(round(seconds * _FPS))):
        t = k / _FPS
        latest = [image for start, image in timed if start <= t + 1e-6] or [timed[0][1]]
        if t > timed[-1][0] + 0.1:
            break
        wanted.append(np.asarray(latest[-1]))
    return wanted


def _write(path, frames: list[np.ndarray]) -> None:
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=Fraction(_FPS))
        stream.width, stream.height, stream.pix_fmt = *_SIZE, "yuv420p"
        for frame in frames:
            out.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        out.mux(stream.encode())


@pytest.fixture(scope="module")
def joined(tmp_path_factory):
    """3 s of the car park, then TUD-Campus (2.8 s): one cut, at 3.0 s."""
    folder = tmp_path_factory.mktemp("joined")
    path = folder / "car_then_campus.mp4"
    _write(path, _frames_of("intel_car-detection.mp4", _FIRST_SECONDS)
           + _frames_of("mot15_TUD-Campus.mp4", 3.0))
    settings = settings_for(folder / "library", ocr_enabled=False, asr_enabled=False)
    progress = []
    result = ingest(path, settings, progress=lambda stage, done, total: progress.append((stage, done, total)))
    return SimpleNamespace(entry=Library(settings.home).get(result.video_id), result=result,
                           progress=progress)


def test_ingest_reports_the_scenes_stage_and_its_cost(joined):
    steps = joined.result.counts["scenes"]
    assert steps == 3  # 5.8 s in 2 s steps
    assert ("scenes", steps, steps) in joined.progress
    # The frames' part runs beside the person tracker (frame_pass.scan) and is timed there.
    assert {"frames.beside.scenes", "scenes"} <= set(joined.result.seconds)


def test_the_cut_between_two_clips_is_found_and_no_other(joined):
    conn = sqlite3.connect(joined.entry.db_path)
    shots = conn.execute("SELECT t_start, t_end FROM shots ORDER BY id").fetchall()
    cut_steps = conn.execute("SELECT cut_at FROM scenes WHERE cut_at IS NOT NULL").fetchall()
    conn.close()
    assert len(shots) == 2
    assert abs(shots[1][0] - _FIRST_SECONDS) <= _STEP + 1e-6
    assert shots[0][1] == shots[1][0]
    assert len(cut_steps) == 1 and abs(cut_steps[0][0] - _FIRST_SECONDS) <= _STEP + 1e-6


def test_the_timeline_and_episodic_memory_say_where_the_cut_is(joined):
    conn = sqlite3.connect(joined.entry.db_path)
    texts = [r[0] for r in conn.execute("SELECT description FROM timeline ORDER BY t_start")]
    conn.close()
    cut_said = [t for t in texts if "Cut to a new shot at" in t]
    assert len(cut_said) == 1 and all("Picture:" in t for t in texts)
    memory = [r["text"] for r in episodic.rows(joined.entry.folder)]
    assert any("Cut to a new shot at" in t for t in memory)
    assert any("1 cut (at" in t for t in memory)  # the whole-video summary


def test_both_halves_of_the_joined_clip_read_as_a_static_camera(joined):
    conn = sqlite3.connect(joined.entry.db_path)
    cameras = {r[0] for r in conn.execute("SELECT camera FROM scenes")}
    conn.close()
    assert cameras <= {"static", "unknown"} and "static" in cameras


def _texture(width=960, height=720, seed=1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    blocks = rng.integers(20, 235, size=(height // 12, width // 12, 3), dtype=np.uint8)
    image = Image.fromarray(np.kron(blocks, np.ones((12, 12, 1), dtype=np.uint8)))
    return np.asarray(image.resize((width, height), Image.Resampling.BILINEAR))


def _views(kind: str, count: int = 15) -> list[np.ndarray]:
    """A still picture seen through a camera that moves: each sampled frame is a window of it,
    shifted (pan, tilt) or shrunk (zoom in) a little more each time, at 320 x 240."""
    image, views = _texture(), []
    for k in range(count):
        x, y, w, h = 200, 160, 480, 360
        if kind.startswith("pan"):
            x += 6 * k if kind == "pan right" else -6 * k
        elif kind.startswith("tilt"):
            y += 6 * k if kind == "tilt down" else -6 * k
        elif kind.startswith("zoom"):
            grow = -8 * k if kind == "zoom in" else 8 * k
            x, y, w, h = x - grow, y - round(grow * 0.75), w + 2 * grow, h + round(grow * 1.5)
        window = Image.fromarray(image[y:y + h, x:x + w]).resize((320, 240), Image.Resampling.BILINEAR)
        views.append(np.asarray(window))
    return views


def _analyse(frames: list[np.ndarray]) -> SceneAnalyser:
    analyser = SceneAnalyser(fps=_FPS)
    for k, frame in enumerate(frames):
        analyser.add(k * 5, k * 5 / _FPS, frame)
    return analyser


@pytest.mark.parametrize("kind", ["pan right", "pan left", "tilt down", "tilt up", "zoom in",
                                  "zoom out", "static"])
def test_camera_motion_of_a_still_picture_reads_in_the_right_direction(kind):
    analyser = _analyse(_views(kind))
    camera, speed = scenes.camera_motion(analyser.looks)
    assert camera == kind
    assert not analyser.cuts  # a camera move is not a cut
    if kind == "static":
        assert speed < scenes.CAMERA_STILL
        assert all(look.changed < 0.01 for look in analyser.looks[1:])


@pytest.mark.parametrize("rgb, colour, light", [((30, 110, 50), "green", "dim"),
                                                 ((230, 30, 30), "red", "dim"),
                                                 ((250, 250, 245), "white", "bright"),
                                                 ((12, 12, 14), "black", "dark")])
def test_a_solid_colour_clip_is_named_with_its_colour_and_brightness(rgb, colour, light):
    frames = [np.full((240, 320, 3), rgb, dtype=np.uint8) for _ in range(10)]
    looks = _analyse(frames).looks
    shot = scenes.shots([], 2.0)
    scene = scenes.segment_scene(looks, [], shot, 0.0, 2.0)
    assert scene.colours == f"{colour} 100%"
    assert scene.brightness == light and scene.motion == "still"
    assert f"mostly {colour}" in scenes.picture(scene)


def _ask(tables: VideoTables, question: str, time: str = "") -> str:
    return run(TypedQuery(operation="scene", target="", time=time, until="", words=""),
               question, tables).value


def test_the_typed_scene_query_answers_from_the_tables(joined):
    tables = VideoTables(joined.entry.db_path)
    cut = _ask(tables, "When is the cut?")
    assert abs(float(cut.split()[0]) - _FIRST_SECONDS) <= _STEP + 1e-6
    assert _ask(tables, "How many shots does the video have?") == "2"
    assert _ask(tables, "Is the camera moving at 1 second?") == "no"
    assert _ask(tables, "Is the camera static?") == "yes"
    assert _ask(tables, "Is there a cut at 3 s?") == "yes"
    assert _ask(tables, "Is there a cut between 4 and 5 seconds?") == "no"
    assert _ask(tables, "Is it dark at the start?") == "no"


def test_whether_the_camera_moves_is_read_from_the_scenes_and_said_first(joined):
    from backend.agent import option_match, routing

    tables = VideoTables(joined.entry.db_path)
    # Both clips were filmed from a fixed camera.
    assert routing.route("Is the camera static?", tables.duration) == ("scene", "How")
    given = routing.first_step("Does the camera move?", tables).observation
    assert given.value == "no" and given.text.startswith("No: "), given.text
    choice = routing.asked_choice("Is the camera moving or still?", tables)
    assert choice.options == ["moving", "still"]
    decision = option_match.decide(choice.routed.observation.typed, choice.options)
    assert decision.chosen == 1 and "camera's seconds" in decision.explanation
    # The camera named as where someone is, is not the camera's motion.
    assert routing.route("Is the girl beside the camera still?",
                         tables.duration) != ("scene", "How")


def test_a_video_ingested_before_scenes_were_measured_says_so(joined, tmp_path):
    copy = tmp_path / "video.db"
    copy.write_bytes(joined.entry.db_path.read_bytes())
    conn = sqlite3.connect(copy)
    models = json.loads(conn.execute("SELECT models FROM video").fetchone()[0])
    models.pop("scenes")
    conn.execute("UPDATE video SET models = ?", (json.dumps(models),))
    conn.execute("DROP TABLE scenes")
    conn.execute("DROP TABLE shots")
    conn.commit()
    conn.close()
    result = run(TypedQuery(operation="scene", target="", time="", until="", words=""),
                 "When is the cut?", VideoTables(copy))
    assert result.support == "unobserved" and "ingest it again" in result.text
