"""Settings: every one is documented in the README, and enumerated ones refuse other values."""

from __future__ import annotations

import re

import pytest

from backend import config
from backend.errors import SettingsError
from models import tracker, weights
from tests.conftest import REPO


def _readme_configuration_variables() -> set[str]:
    """The variables named in the first column of the README's Configuration table."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    return {name for cell in rows for name in re.findall(r"`(MEMORYREEL_\w+)`", cell)}


def test_every_setting_is_documented_in_the_readme():
    documented = _readme_configuration_variables()
    settings = {env for env, _, _ in config.Settings.documented()}
    assert settings - documented == set(), "settings missing from the README's Configuration"
    assert documented - settings == set(), "README documents variables no setting reads"


@pytest.mark.parametrize("name, allowed", sorted(config.choices().items()))
def test_an_enumerated_setting_refuses_other_values_at_load(monkeypatch, name, allowed):
    env = config.Settings.__dataclass_fields__[name].metadata["env"]
    monkeypatch.setenv(env, "nonsense")
    with pytest.raises(SettingsError) as error:
        config.load()
    assert str(error.value) == f"{env} must be one of {', '.join(allowed)}, not 'nonsense'."


def test_enumerated_settings_are_the_ones_with_fixed_values():
    assert config.choices() == {
        "agent": ("grounded", "sql"),
        "captioner": ("evidence", "openai", "llama", "transformers"),
        "detector_runtime": ("auto", "onnx", "torch"),
        "llm_size": ("1.5b", "0.5b"),
        "tracker": ("ocsort", "bytetrack"),
    }
    # The embedded LLM's sizes are the ones whose weights ship, the trackers the ones configured.
    assert set(config.choices()["llm_size"]) == set(weights.QWEN_GGUF)
    assert set(config.choices()["tracker"]) == set(tracker.ASSOCIATIONS)
    defaults = {name: getattr(config.Settings(), name) for name in config.choices()}
    assert all(defaults[name] in allowed for name, allowed in config.choices().items())
