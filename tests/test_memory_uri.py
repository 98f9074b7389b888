"""The memory tables at MEMORYREEL_MEMORY_URI (issue 25): written and read there, nothing under
the memory folder, and reading still creates nothing. No network here: a file:// URI and another
local folder stand for s3:// and its kin, and memory:// (an object store in this process) for
a store where nothing exists before a table is written.
"""

from __future__ import annotations

import numpy as np
import pytest

from backend.memory.store import MemoryStore
from tests.conftest import settings_for

DIM = 8


def _procedure(question: str) -> dict:
    return {"question": question, "text": f"worked for: {question}", "answer": "3",
            "task_type": "count", "workflow": "[]"}


def _vector(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.mark.parametrize("form", ["file", "path"])
def test_entries_live_at_the_uri_and_nothing_under_the_memory_folder(tmp_path, form):
    elsewhere = tmp_path / "bucket" / "memory"
    uri = elsewhere.as_uri() if form == "file" else str(elsewhere)
    settings = settings_for(tmp_path / "home", memory_uri=uri)
    store = MemoryStore(settings, embed=lambda texts: np.stack([_vector(1)] * len(texts)))
    assert store.list() == [] and not elsewhere.exists()  # reading creates nothing
    entry_id = store.add("procedural", _procedure("how many people"), _vector(1))
    assert (elsewhere / "procedural.lance").is_dir()
    assert not (settings.memory_path / "memory.lance").exists()
    again = MemoryStore(settings)  # a fresh store, as another process or replica would open it
    assert [e.id for e in again.list()] == [entry_id]
    assert again.search(vector=_vector(1), k=1)[0].id == entry_id
    again.delete(entry_id)
    assert store.list() == []


def test_an_object_store_uri_is_read_by_its_table_names(tmp_path):
    settings = settings_for(tmp_path / "home", memory_uri="memory://memoryreel-test")
    store = MemoryStore(settings)
    assert store.list() == [] and store.count("procedural") == 0
    entry_id = store.add("procedural", _procedure("what is said"), _vector(2))
    assert [e.id for e in store.list(kind="procedural")] == [entry_id]
    assert not (settings.memory_path / "memory.lance").exists()
