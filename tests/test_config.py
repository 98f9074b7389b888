"""Settings: every one is documented in docs/CONFIGURATION.md, and enumerated ones refuse other
values."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from backend import config
from backend.errors import SettingsError
from models import tagger, tracker, weights
from tests.conftest import REPO


def _documented_configuration_variables() -> set[str]:
    """The variables named in the first column of docs/CONFIGURATION.md's Configuration table."""
    text = (REPO / "docs" / "CONFIGURATION.md").read_text(encoding="utf-8")
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    return {name for cell in rows for name in re.findall(r"`(MEMORYREEL_\w+)`", cell)}


def test_every_setting_is_documented_in_the_configuration_doc():
    documented = _documented_configuration_variables()
    settings = {env for env, _, _ in config.Settings.documented()}
    assert settings - documented == set(), "settings missing from docs/CONFIGURATION.md"
    assert documented - settings == set(), "docs/CONFIGURATION.md documents variables no setting reads"


@pytest.mark.parametrize("name, allowed", sorted(config.choices().items()))
def test_an_enumerated_setting_refuses_other_values_at_load(monkeypatch, name, allowed):
    env = config.Settings.__dataclass_fields__[name].metadata["env"]
    monkeypatch.setenv(env, "nonsense")
    with pytest.raises(SettingsError) as error:
        config.load()
    assert str(error.value) == f"{env} must be one of {', '.join(allowed)}, not 'nonsense'."


def test_bfloat16_detectors_are_refused_without_openvino(monkeypatch):
    monkeypatch.setenv("MEMORYREEL_DETECTOR_PRECISION", "bf16")
    with pytest.raises(SettingsError, match="MEMORYREEL_DETECTOR_RUNTIME=openvino"):
        config.load()
    monkeypatch.setenv("MEMORYREEL_DETECTOR_RUNTIME", "openvino")
    assert config.load().detector_precision == "bf16"


def test_enumerated_settings_are_the_ones_with_fixed_values():
    assert config.choices() == {
        "agent": ("grounded", "sql"),
        "captioner": ("evidence", "openai", "llama", "transformers"),
        "classifier_precision": ("auto", "f32"),
        "detector_precision": ("fp32", "int8", "bf16"),
        "detector_runtime": ("auto", "onnx", "openvino", "torch"),
        "llm_size": ("1.5b", "0.5b"),
        "tracker": ("ocsort", "bytetrack"),
        "tagger": ("lite0", "lite2"),
    }
    # The embedded LLM's sizes are the ones whose weights ship, the trackers the ones configured.
    assert set(config.choices()["llm_size"]) == set(weights.QWEN_GGUF)
    assert set(config.choices()["tracker"]) == set(tracker.ASSOCIATIONS)
    assert set(config.choices()["tagger"]) == set(tagger.VARIANTS)
    defaults = {name: getattr(config.Settings(), name) for name in config.choices()}
    assert all(defaults[name] in allowed for name, allowed in config.choices().items())


@pytest.mark.parametrize("env, value, words", [
    ("MEMORYREEL_PORT", "0", "MEMORYREEL_PORT must be from 1 to 65535, not '0'."),
    ("MEMORYREEL_PORT", "65536", "MEMORYREEL_PORT must be from 1 to 65535"),
    ("MEMORYREEL_AUTH", "nocolon", "MEMORYREEL_AUTH must be user:password, both non-empty"),
    ("MEMORYREEL_AUTH", ":secret", "MEMORYREEL_AUTH must be user:password"),
    ("MEMORYREEL_AUTH", "admin:", "MEMORYREEL_AUTH must be user:password"),
    ("MEMORYREEL_LLM_BASE_URL", "localhost:11434/v1", "MEMORYREEL_LLM_BASE_URL must be an http"),
    ("MEMORYREEL_LLM_BASE_URL", "http://", "MEMORYREEL_LLM_BASE_URL must be an http"),
    ("MEMORYREEL_LLM_BASE_URL", "http://[::1/v1", "MEMORYREEL_LLM_BASE_URL must be an http"),
    ("MEMORYREEL_LLM_BASE_URL", "http://localhost:99999/v1", "MEMORYREEL_LLM_BASE_URL must be"),
    ("MEMORYREEL_VISION_BASE_URL", "ftp://files.example/v1", "MEMORYREEL_VISION_BASE_URL must be"),
    ("MEMORYREEL_DETECTOR_CONF", "1.5", "MEMORYREEL_DETECTOR_CONF must be from 0 to 1"),
    ("MEMORYREEL_DETECTOR_CONF", "nan", "MEMORYREEL_DETECTOR_CONF must be from 0 to 1"),
    ("MEMORYREEL_REPLAY_MIN_SIMILARITY", "-0.2", "MEMORYREEL_REPLAY_MIN_SIMILARITY must be from 0"),
    ("MEMORYREEL_REPLAY_MIN_SIMILARITY", "1.01", "MEMORYREEL_REPLAY_MIN_SIMILARITY must be from 0"),
    ("MEMORYREEL_OCR_CHANGE", "256", "MEMORYREEL_OCR_CHANGE must be from 0 to 255"),
    ("MEMORYREEL_CAPTION_CHANGE", "-1", "MEMORYREEL_CAPTION_CHANGE must be from 0 to 255"),
    ("MEMORYREEL_N_SOLUTIONS", "7", "MEMORYREEL_N_SOLUTIONS must be from 1 to 6"),
    ("MEMORYREEL_LLM_CTX", "100", "MEMORYREEL_LLM_CTX must be from 2048 to 131072"),
    ("MEMORYREEL_LLM_THREADS", "100000", "MEMORYREEL_LLM_THREADS must be from 1 to 1024"),
    ("MEMORYREEL_MEMORY_URI", "ftp://host/memory", "MEMORYREEL_MEMORY_URI must be a local folder"),
    ("MEMORYREEL_MEMORY_URI", "s4://bucket/memory", "or a URI with one of s3://, s3+ddb://, gs://"),
])
def test_values_outside_their_meaning_are_refused_at_load(monkeypatch, env, value, words):
    monkeypatch.setenv(env, value)
    with pytest.raises(SettingsError, match=re.escape(words)):
        config.load()


def test_the_password_is_never_in_the_message(monkeypatch):
    monkeypatch.setenv("MEMORYREEL_AUTH", ":hunter2")
    with pytest.raises(SettingsError) as error:
        config.load()
    assert "hunter2" not in str(error.value)


@pytest.mark.parametrize("env, value", [
    ("MEMORYREEL_PORT", "1"), ("MEMORYREEL_PORT", "65535"),
    ("MEMORYREEL_AUTH", "admin:pass:with:colons"),
    ("MEMORYREEL_LLM_BASE_URL", "https://api.openai.com/v1"),
    ("MEMORYREEL_LLM_BASE_URL", "http://[::1]:8080/v1"),
    ("MEMORYREEL_VISION_BASE_URL", "http://127.0.0.1:8000/v1"),
    ("MEMORYREEL_DETECTOR_CONF", "0"), ("MEMORYREEL_DETECTOR_CONF", "1"),
    ("MEMORYREEL_REPLAY_MIN_SIMILARITY", "0.9"), ("MEMORYREEL_N_SOLUTIONS", "6"),
    ("MEMORYREEL_MEMORY_URI", "s3://bucket/memory"), ("MEMORYREEL_MEMORY_URI", "gs://b/m"),
    ("MEMORYREEL_MEMORY_URI", "az://container/memory"), ("MEMORYREEL_MEMORY_URI", "/srv/memory"),
])
def test_values_at_the_edges_of_their_range_load(monkeypatch, env, value):
    monkeypatch.setenv(env, value)
    config.load()


def test_overrides_are_read_as_load_reads_them_and_keep_the_rest():
    base = config.Settings(home=Path("/somewhere"))
    changed = config.with_overrides(base, {"MEMORYREEL_ANSWER_CHECKS": "off",
                                           "MEMORYREEL_DETECTOR_MAX_IMGSZ": "640"})
    assert (changed.answer_checks, changed.detector_max_imgsz) == (False, 640)
    assert changed.home == base.home  # not re-read from the environment
    assert config.overrides_label({"MEMORYREEL_ANSWER_CHECKS": "0"}) == "ANSWER_CHECKS=0"
    with pytest.raises(SettingsError, match="MEMORYREEL_DETECTOR_MAX_IMGSZ must be more than 0"):
        config.with_overrides(base, {"MEMORYREEL_DETECTOR_MAX_IMGSZ": "0"})
    with pytest.raises(SettingsError, match="MEMORYREEL_AGENT must be one of"):
        config.with_overrides(base, {"MEMORYREEL_AGENT": "other"})
