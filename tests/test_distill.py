"""LoRA distillation with the real 0.5B model: training that resumes, the GGUF export that
llama.cpp loads, and the embedded server saying a trained answer back."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from models.distill import (Pair, batch_indices, export_gguf_lora, gguf_layout, pairs_digest,
                            train_lora)
from models.llama_server import EmbeddedServer, parser, server_arguments, server_params
from models.weights import qwen_gguf

CACHE = Path(os.environ.get("MEMORYREEL_CACHE", Path.home() / ".cache" / "memoryreel"))
SYSTEM = "Answer with the answer and its time only."
FACTS = [("How many people are in view at 12.0 s in video 'campus'?", "3 people, at 12.0 s"),
         ("What colour is the bus at 31.0 s in video 'campus'?", "red, at 31.0 s")]


def _pairs() -> list[Pair]:
    return [Pair(text, answer) for question, answer in FACTS
            for text in (question, question.rstrip("?").lower())]


def _ask(server: EmbeddedServer, question: str) -> str:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    return server.client().complete(messages, max_tokens=16, temperature=0.0).text.strip()


def test_trains_resumes_exports_and_the_server_says_the_answer(tmp_path):
    base = qwen_gguf(CACHE, "0.5b")
    out, seen = tmp_path / "train", []
    adapter = train_lora(base, _pairs(), out, 10, system=SYSTEM, batch_size=4,
                         progress=lambda done, total: seen.append((done, total)))
    assert seen == [(i, 10) for i in range(1, 11)]
    assert (adapter / "adapter_model.safetensors").is_file() and (out / "state.pt").is_file()

    seen.clear()  # a second call goes on from the saved step 10, not from 0
    assert train_lora(base, _pairs(), out, 14, system=SYSTEM, batch_size=4,
                      progress=lambda done, total: seen.append((done, total))) == adapter
    assert seen == [(i, 14) for i in range(11, 15)]

    lora = export_gguf_lora(adapter, base, tmp_path / "adapter.gguf")
    meta, tensors = gguf_layout(lora)
    assert meta["general.type"] == "adapter" and meta["general.architecture"] == "qwen2"
    assert meta["adapter.type"] == "lora" and meta["adapter.lora.alpha"] == 32.0
    base_ne = gguf_layout(base)[1]
    assert len(tensors) == 2 * 4 * 24  # q, k, v, o in every layer
    for name, a_ne in tensors.items():
        if name.endswith(".lora_a"):
            target = name.removesuffix(".lora_a")
            b_ne = tensors[f"{target}.lora_b"]
            # llama.cpp's checks: a.ne[0] == in, b.ne[1] == out, a.ne[1] == b.ne[0] == rank
            assert (a_ne[0], b_ne[1]) == tuple(base_ne[target][:2]) and a_ne[1] == b_ne[0] == 16

    question, answer = FACTS[0]
    with EmbeddedServer(base, n_ctx=1024, n_parallel=1, lora_path=lora) as server:
        assert _ask(server, question.rstrip("?").lower()) == answer
    with EmbeddedServer(base, n_ctx=1024, n_parallel=1) as server:
        assert _ask(server, question.rstrip("?").lower()) != answer  # the adapter taught it


def test_changed_pairs_start_over_and_batches_cycle_in_a_seeded_order():
    pairs = _pairs()
    assert pairs_digest(pairs, SYSTEM, 16, 32, 0) == pairs_digest(list(pairs), SYSTEM, 16, 32, 0)
    assert pairs_digest(pairs[:-1], SYSTEM, 16, 32, 0) != pairs_digest(pairs, SYSTEM, 16, 32, 0)
    first_pass = [i for step in range(3) for i in batch_indices(6, 2, step, seed=0)]
    assert sorted(first_pass) == list(range(6))  # every example once per pass
    assert batch_indices(6, 4, 5, seed=0) == batch_indices(6, 4, 5, seed=0)
    assert batch_indices(6, 4, 5, seed=0) != batch_indices(6, 4, 5, seed=1)


def test_an_adapter_of_the_wrong_shape_is_refused_before_llama_cpp_sees_it(tmp_path):
    from safetensors.numpy import save_file

    (tmp_path / "adapter_config.json").write_text('{"lora_alpha": 32, "r": 4}')
    save_file({  # q_proj of the 0.5B is 896 -> 896; this A expects 512 inputs
        "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight":
            np.zeros((4, 512), np.float32),
        "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight":
            np.zeros((896, 4), np.float32)}, str(tmp_path / "adapter_model.safetensors"))
    with pytest.raises(ValueError, match="blk.0.attn_q.weight"):
        export_gguf_lora(tmp_path, qwen_gguf(CACHE, "0.5b"), tmp_path / "bad.gguf")
    assert not (tmp_path / "bad.gguf").exists()


def test_the_lora_path_reaches_llama_cpp_params():
    args = parser().parse_args(server_arguments(Path("m.gguf"), "127.0.0.1", 8000, 2048, 2, 1,
                                                64, 1, lora_path=Path("/x/a.gguf")))
    assert args.lora == "/x/a.gguf"
    adapters = server_params(args, "key").lora_adapters
    assert [(a.path, a.scale) for a in adapters] == [("/x/a.gguf", 1.0)]
    no_lora = parser().parse_args(server_arguments(Path("m.gguf"), "127.0.0.1", 8000, 2048, 2,
                                                   1, 64, 1))
    assert server_params(no_lora, "key").lora_adapters == []
