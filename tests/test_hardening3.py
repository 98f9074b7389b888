"""Hardening, round three: what a new user or an attacker tried that failed before this round."""

from __future__ import annotations

import io
import os
import shutil
import time

import networkx as nx
import pytest

from app import graph_edits
from backend.batch import files, runner
from backend.errors import InputError
from backend.exports import video as video_export
from backend.inputs import MAX_QUESTION_CHARS, check_question
from tests.conftest import clip, settings_for
from tests.test_cli_json import cli


def test_an_export_into_the_library_is_refused_and_the_video_keeps_working(ingested,
                                                                           library_settings):
    done = ingested("mot15_TUD-Campus.mp4")
    home = library_settings.home
    target = home / "videos" / done.video_id / "video.db"
    before = target.read_bytes()
    status, payload, _ = cli("export", done.video_id, "--format", "csv", "--out", str(target),
                             "--json", home=home)
    assert status == 2 and "inside the library folder" in payload["error"]
    assert target.read_bytes() == before
    status, payload, _ = cli("info", done.video_id, "--json", home=home)
    assert status == 0 and payload["video_id"] == done.video_id


def test_globs_never_follow_linked_folders_and_list_each_file_once(tmp_path):
    root = tmp_path / "footage"
    (root / "sub").mkdir(parents=True)
    shutil.copyfile(clip("mot15_TUD-Campus.mp4"), root / "a.mp4")
    (root / "sub" / "b.mp4").write_bytes(b"0")
    (root / "loop").symlink_to(".")            # a folder linked to itself ...
    (root / "sub" / "up").symlink_to("..")     # ... and to its parent: endless through links
    (root / "same.mp4").symlink_to(root / "a.mp4")  # one file under two names
    started = time.monotonic()
    found, unmatched = files.expand([f"{root}/**/*.mp4", str(root)], tmp_path / "library")
    assert time.monotonic() - started < 10
    assert sorted(p.relative_to(root).as_posix() for p in found) == ["a.mp4", "sub/b.mp4"]
    assert not unmatched
    # '**' is any number of folders, none included; '*' stays within one.
    found, _ = files.expand([f"{root}/*/*.mp4"], tmp_path / "library")
    assert [p.relative_to(root).as_posix() for p in found] == ["sub/b.mp4"]


def test_workers_are_capped_by_cores_and_free_memory_and_it_is_said():
    assert runner.cap_workers(1000, cores=2, free_bytes=24 * 2**30) == \
        (2, "capped at 2 workers of the 1000 asked: this machine has 2 cores")
    count, why = runner.cap_workers(16, cores=64, free_bytes=4 * 2**30)
    assert count == 4 * 2**30 // runner.WORKER_BYTES and "GiB of free memory" in why
    assert runner.cap_workers(2, cores=8, free_bytes=24 * 2**30) == (2, "")
    assert runner.cap_workers(3, cores=8, free_bytes=2**20)[0] == 1  # always at least one


def test_graphml_holds_node_names_with_control_characters_and_escapes():
    graph = nx.MultiDiGraph()
    graph.add_node("fact: how many\x0b cars \x1b[31mred\x1b[0m?", kind="fact",
                   detail="said \x07 twice")
    graph.add_node("car 3", kind="object")
    graph.add_edge("car 3", "fact: how many\x0b cars \x1b[31mred\x1b[0m?", relation="answered")
    out = io.BytesIO()
    nx.write_graphml(video_export.graphml_safe(graph), out)
    back = nx.read_graphml(io.BytesIO(out.getvalue()))
    names = sorted(back.nodes)
    assert len(names) == 2 and any("cars" in n and "red" in n for n in names)
    assert back.number_of_edges() == 1


@pytest.mark.parametrize("typed", [3.7, "3.7", 1e30, "abc", -1, 0, float("nan"), "1e30"])
def test_an_edge_id_is_a_whole_number_or_a_message_saying_so(typed):
    with pytest.raises(InputError, match="whole number"):
        graph_edits._edge_id(typed)


def test_whole_edge_ids_pass_as_typed():
    assert graph_edits._edge_id(4.0) == 4 and graph_edits._edge_id("12") == 12


def test_an_over_long_question_is_refused_before_any_model_sees_it(tmp_path, ingested,
                                                                  library_settings):
    from backend.ask import ask
    from tests.fakes import ScriptedLLM

    long_question = "how many people " * 200
    with pytest.raises(InputError, match=f"the limit is {MAX_QUESTION_CHARS}"):
        check_question("abc", long_question)
    llm = ScriptedLLM([])  # any call would fail: none may be made
    done = ingested("mot15_TUD-Campus.mp4")
    with pytest.raises(InputError, match="characters long"):
        ask(done.video_id, long_question, library_settings, llm=llm)
    status, payload, _ = cli("ask", done.video_id, long_question, "--json",
                             home=library_settings.home)
    assert status != 0 and "the limit is" in payload["error"] and "http" not in payload["error"]


def test_a_glob_of_the_library_itself_offers_nothing(tmp_path):
    home = tmp_path / "library"
    (home / "videos" / "0123456789abcdef").mkdir(parents=True)
    (home / "videos" / "0123456789abcdef" / "source.mp4").write_bytes(b"0")
    found, unmatched = files.expand([f"{tmp_path}/**/*.mp4"], home)
    assert not found and unmatched
    assert os.path.isdir(home)
    settings_for(home)  # the library stays a valid home


def test_one_damaged_database_never_breaks_the_library_and_reingest_repairs_it(tmp_path):
    from backend.ingest.pipeline import ingest
    from backend.library import Library

    home = tmp_path / "library"
    settings = settings_for(home, asr_enabled=False, ocr_enabled=False)
    campus = ingest(clip("mot15_TUD-Campus.mp4"), settings)
    other = ingest(clip("mot15_TUD-Stadtmitte.mp4"), settings)
    damaged = home / "videos" / campus.video_id / "video.db"
    damaged.write_text("instance_id,frame,t\n1,0,0.0\n")  # what `export --out` once wrote there
    library = Library(home)
    assert [e.video_id for e in library.list()] == [other.video_id]
    status, payload, _ = cli("info", "--json", home=home)
    assert status == 0 and [v["video_id"] for v in payload["videos"]] == [other.video_id]
    assert payload["damaged"][0]["video_id"] == campus.video_id
    assert "ingest its file again" in payload["damaged"][0]["repair"]
    status, payload, _ = cli("info", campus.video_id, "--json", home=home)
    assert status != 0 and "damaged" in payload["error"] and "ingest its file again" in \
        payload["error"]
    # Another video still ingests; the damaged one is rebuilt by ingesting its file again.
    repaired = ingest(clip("mot15_TUD-Campus.mp4"), settings)
    assert not repaired.cached and repaired.video_id == campus.video_id
    assert sorted(e.video_id for e in Library(home).list()) == \
        sorted([campus.video_id, other.video_id])
    assert not Library(home).damaged()


def _trimmed_with_an_edit_list(out):
    """TUD-Campus remuxed with its first 8 frames before the start of the edit list, as a trim
    without re-encoding leaves it: the container declares 71 frames, 63 are shown."""
    import av

    with av.open(str(clip("mot15_TUD-Campus.mp4"))) as source, av.open(str(out), "w") as target:
        stream = source.streams.video[0]
        copy = target.add_stream_from_template(stream)
        shift = 8 * round(1 / (25 * stream.time_base))
        for packet in source.demux(stream):
            if packet.dts is None:
                continue
            packet.stream = copy
            packet.pts -= shift
            packet.dts -= shift
            target.mux(packet)
    return out


def test_a_clip_that_declares_more_frames_than_decode_keeps_every_frame_that_does(tmp_path):
    from backend.ingest import decode
    from backend.ingest.pipeline import ingest
    from backend.library import Library

    path = _trimmed_with_an_edit_list(tmp_path / "trimmed.mp4")
    assert decode.probe(path).frames == 71  # what the container declares
    settings = settings_for(tmp_path / "library", asr_enabled=False, ocr_enabled=False)
    done = ingest(path, settings)
    assert done.duration == pytest.approx(63 / 25)
    info = Library(settings.home).get(done.video_id).info()
    assert info["frames"] == 63 and info["models"]["frames_declared"] == 71
    assert any("declares 71 frames" in w and "63 decode" in w for w in info["warnings"])
    assert info["tables"]["instances"] >= 3  # its people are tracked as in the clip
