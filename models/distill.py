"""Teach the small chat model question-answer pairs with a LoRA adapter, for llama.cpp to serve.

`train_lora` fine-tunes the base GGUF (transformers dequantises it; there are no safetensors of
it) with PEFT, and `export_gguf_lora` writes the adapter in the GGUF LoRA format that llama.cpp
loads on top of the same quantised base (`models.llama_server.EmbeddedServer(lora_path=...)`).

- Loss only on the answer tokens (and the end-of-turn token, so the model also learns to stop);
  the prompt is the chat template llama.cpp's server applies too (it renders the GGUF's own
  Jinja template), so the adapter is trained on the very text it sees when asked.
- The vocabulary projection is applied only where an answer token is predicted: for the short
  pairs this is used for, it is a large share of the work, and the prompt positions need none.
- Training is resumable: a checkpoint (adapter, optimizer, step reached, a digest of the pairs
  and settings) is written every `_CHECKPOINT_EVERY` steps; a call with another digest starts
  over. Batches come from a seeded order that is a pure function of the step, so a resumed run
  sees the same batches as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

log = logging.getLogger(__name__)

# Attention only: on this 0.5B (2 CPU cores, batch 8, lr 1e-3) adding the MLP projections cost
# about 10 % more per step and lowered the loss less per step, so it learned slower per second.
_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj")
_CHECKPOINT_EVERY = 25
_IGNORE = -100  # the label that cross-entropy skips


@dataclass(frozen=True)
class Pair:
    """One training example: a question as a user would type it, and the answer to say back."""

    prompt: str
    answer: str


@dataclass(frozen=True)
class _Example:
    input_ids: list[int]
    labels: list[int]  # _IGNORE on the prompt


def train_lora(base_gguf: Path, pairs: list[Pair], out_dir: Path, steps: int, *,
               system: str = "", rank: int = 16, alpha: int = 32, learning_rate: float = 1e-3,
               batch_size: int = 8,
               progress: Callable[[int, int], None] = lambda done, total: None,
               seed: int = 0) -> Path:
    """Train a LoRA adapter on `pairs` for `steps` optimizer steps; returns out_dir / "adapter".

    A later call with the same out_dir, pairs and settings resumes from the last checkpoint
    (progress is then called from the step after it). Nothing is cached outside out_dir.
    learning_rate: 1e-3 taught the 0.5B 12 facts in 4 wordings each in 18 steps of 8 (2e-4
    is the usual LoRA rate, for far more data than a handful of facts)."""
    import torch

    if not pairs:
        raise ValueError("train_lora needs at least one pair")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    digest = pairs_digest(pairs, system, rank, alpha, seed)
    state = _saved_state(out_dir, digest)
    if state is not None and state["step"] >= steps:
        log.info("LoRA in %s already trained for %d steps", out_dir, state["step"])
        return out_dir / "adapter"

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        torch.set_num_threads(os.cpu_count() or 1)
    tokenizer, model = load_base(base_gguf, device)
    examples = [_encode(tokenizer, system, p) for p in pairs]
    model = _with_lora(model, out_dir, state, rank, alpha, seed)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=learning_rate, weight_decay=0.0)
    start = 0
    if state is not None:
        optimizer.load_state_dict(state["optimizer"])
        start = state["step"]
        log.info("resuming LoRA training in %s at step %d of %d", out_dir, start, steps)

    model.train()
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    for step in range(start, steps):
        started = time.monotonic()
        batch = [examples[i] for i in batch_indices(len(examples), batch_size, step, seed)]
        loss = _loss(model, *_collate(batch, pad, device))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        log.debug("step %d/%d loss %.4f %.1f s", step + 1, steps, loss.item(),
                  time.monotonic() - started)
        if (step + 1) % _CHECKPOINT_EVERY == 0 or step + 1 == steps:
            _save_checkpoint(out_dir, model, optimizer, step + 1, digest)
        progress(step + 1, steps)
    return out_dir / "adapter"


def load_base(base_gguf: Path, device: str = "cpu"):
    """(tokenizer, model) from the GGUF file, dequantised to float32, without the hub."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base_gguf = Path(base_gguf)
    started = time.monotonic()
    tokenizer = AutoTokenizer.from_pretrained(base_gguf.parent, gguf_file=base_gguf.name)
    model = AutoModelForCausalLM.from_pretrained(base_gguf.parent, gguf_file=base_gguf.name,
                                                 dtype=torch.float32)
    log.info("loaded %s into transformers in %.1f s", base_gguf.name, time.monotonic() - started)
    return tokenizer, model.to(device)


def pairs_digest(pairs: list[Pair], system: str, rank: int, alpha: int, seed: int) -> str:
    """What a checkpoint must match to be resumed: the data and what shapes the adapter."""
    blob = json.dumps([system, rank, alpha, seed, [[p.prompt, p.answer] for p in pairs]])
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def batch_indices(n: int, batch_size: int, step: int, seed: int) -> list[int]:
    """The examples of one step: a seeded shuffle per pass over the n examples, cycled."""
    orders: dict[int, list[int]] = {}  # a batch may span passes: each is shuffled once
    picked = []
    for position in range(step * batch_size, (step + 1) * batch_size):
        epoch, offset = divmod(position, n)
        if epoch not in orders:
            orders[epoch] = list(range(n))
            random.Random(f"{seed}:{epoch}").shuffle(orders[epoch])
        picked.append(orders[epoch][offset])
    return picked


def chat_messages(system: str, prompt: str, answer: str | None = None) -> list[dict]:
    """The conversation the adapter is trained on (and asked with, without the answer)."""
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    if answer is not None:
        messages.append({"role": "assistant", "content": answer})
    return messages


def _encode(tokenizer, system: str, pair: Pair) -> _Example:
    def ids(messages: list[dict], generation_prompt: bool) -> list[int]:
        text = tokenizer.apply_chat_template(messages, tokenize=False,
                                             add_generation_prompt=generation_prompt)
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    prompt = ids(chat_messages(system, pair.prompt), True)
    full = ids(chat_messages(system, pair.prompt, pair.answer), False)
    if full[:len(prompt)] != prompt:
        raise ValueError(f"the chat template does not extend the prompt for {pair.prompt!r}")
    answer = full[len(prompt):]
    if tokenizer.eos_token_id in answer:  # drop what the template adds after the end of turn
        answer = answer[:answer.index(tokenizer.eos_token_id) + 1]
    return _Example(prompt + answer, [_IGNORE] * len(prompt) + answer)


def _collate(batch: list[_Example], pad: int, device: str):
    import torch

    width = max(len(e.input_ids) for e in batch)
    ids = torch.full((len(batch), width), pad, dtype=torch.long)
    labels = torch.full((len(batch), width), _IGNORE, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, e in enumerate(batch):  # right padding: positions stay 0.. as when served
        ids[row, :len(e.input_ids)] = torch.tensor(e.input_ids)
        labels[row, :len(e.labels)] = torch.tensor(e.labels)
        mask[row, :len(e.input_ids)] = 1
    return ids.to(device), labels.to(device), mask.to(device)


def _loss(model, ids, labels, mask):
    import torch.nn.functional as F

    causal_lm = model.get_base_model()
    hidden = causal_lm.model(input_ids=ids, attention_mask=mask).last_hidden_state
    targets = labels[:, 1:]
    scored = targets != _IGNORE
    logits = causal_lm.lm_head(hidden[:, :-1][scored])
    return F.cross_entropy(logits.float(), targets[scored])


def _with_lora(model, out_dir: Path, state: dict | None, rank: int, alpha: int, seed: int):
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model

    for p in model.parameters():
        p.requires_grad_(False)
    if state is not None:
        return PeftModel.from_pretrained(model, out_dir / "adapter", is_trainable=True)
    torch.manual_seed(seed)
    config = LoraConfig(r=rank, lora_alpha=alpha, target_modules=list(_TARGETS),
                        lora_dropout=0.0, bias="none", task_type="CAUSAL_LM")
    return get_peft_model(model, config)


def _saved_state(out_dir: Path, digest: str) -> dict | None:
    """The checkpoint to resume from; None to start over (none, another digest, unreadable)."""
    import torch

    path = out_dir / "state.pt"
    if not path.is_file() or not (out_dir / "adapter" / "adapter_config.json").is_file():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - a damaged checkpoint only costs a fresh start
        log.warning("ignoring the unreadable LoRA checkpoint %s: %s", path, e)
        return None
    if state.get("digest") != digest:
        log.info("the pairs or settings changed since %s was saved: training starts over", path)
        return None
    return state


def _save_checkpoint(out_dir: Path, model, optimizer, step: int, digest: str) -> None:
    """Adapter and state are swapped in last, so a crash mid-write keeps the previous pair or
    leaves a state without its adapter, which is ignored."""
    import torch

    partial = out_dir / "adapter.partial"
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial)
    temp = out_dir / "state.pt.partial"
    torch.save({"step": step, "digest": digest, "optimizer": optimizer.state_dict()}, temp)
    (out_dir / "state.pt").unlink(missing_ok=True)
    shutil.rmtree(out_dir / "adapter", ignore_errors=True)
    partial.rename(out_dir / "adapter")
    os.replace(temp, out_dir / "state.pt")


def export_gguf_lora(adapter_dir: Path, base_gguf: Path, out: Path) -> Path:
    """Write the PEFT adapter in adapter_dir as a llama.cpp GGUF LoRA for base_gguf; returns out.

    As llama.cpp's convert_lora_to_gguf.py does: each target's lora_A (r, in) and lora_B
    (out, r) are stored unchanged, as `<base tensor>.lora_a` / `.lora_b`; llama.cpp checks them
    against the base tensor (a.ne[0] == in, b.ne[1] == out, a.ne[1] == b.ne[0]), which is
    checked here first so a mismatch is reported before a server refuses the file."""
    import gguf
    from safetensors.torch import load_file

    adapter_dir, out = Path(adapter_dir), Path(out)
    config = json.loads((adapter_dir / "adapter_config.json").read_text(encoding="utf-8"))
    arch, n_layers, base_shapes = _base_layout(Path(base_gguf))
    names = gguf.get_tensor_name_map(arch, n_layers)
    pairs: dict[str, dict[str, object]] = {}
    for key, tensor in load_file(adapter_dir / "adapter_model.safetensors").items():
        module, _, part = key.removeprefix("base_model.model.").rpartition(".lora_")
        if part not in ("A.weight", "B.weight"):
            raise ValueError(f"{adapter_dir}: {key} is not a LoRA A or B weight")
        base = names.get_name(module)
        if base is None:
            raise ValueError(f"{adapter_dir}: no llama.cpp tensor for {module}")
        pairs.setdefault(f"{base}.weight", {})[part[0]] = tensor.float().numpy()

    for name, ab in pairs.items():
        _check_shapes(name, ab, base_shapes)

    writer_path = out.with_name(out.name + ".partial")
    writer = gguf.GGUFWriter(writer_path, gguf.MODEL_ARCH_NAMES[arch])
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(config["lora_alpha"]))
    for name, ab in sorted(pairs.items()):
        writer.add_tensor(f"{name}.lora_a", ab["A"])
        writer.add_tensor(f"{name}.lora_b", ab["B"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(writer_path, out)
    log.info("wrote %d LoRA tensor pairs to %s", len(pairs), out)
    return out


def gguf_layout(path: Path) -> tuple[dict[str, object], dict[str, list[int]]]:
    """(scalar metadata, {tensor name: ne}) of a GGUF file: what llama.cpp checks an adapter
    against. Arrays (the vocabulary) are left out."""
    import gguf

    reader = gguf.GGUFReader(Path(path))
    meta = {}
    for key, field in reader.fields.items():
        if field.types and field.types[0] != gguf.GGUFValueType.ARRAY:
            value = field.contents()
            meta[key] = value.item() if hasattr(value, "item") else value
    return meta, {t.name: [int(d) for d in t.shape] for t in reader.tensors}


def _base_layout(base_gguf: Path):
    """(architecture, layer count, {tensor name: ne}) of the base GGUF."""
    import gguf

    meta, shapes = gguf_layout(base_gguf)
    name = meta["general.architecture"]
    arch = next((a for a, n in gguf.MODEL_ARCH_NAMES.items() if n == name), None)
    if arch is None:
        raise ValueError(f"{base_gguf}: gguf does not know the architecture {name!r}")
    return arch, int(meta[f"{name}.block_count"]), shapes


def _check_shapes(name: str, ab: dict, base_shapes: dict[str, list[int]]) -> None:
    if set(ab) != {"A", "B"}:
        raise ValueError(f"LoRA for {name} lacks lora_{'B' if 'A' in ab else 'A'}")
    if name not in base_shapes:
        raise ValueError(f"LoRA tensor {name} is not in the base model")
    (rank, n_in), (n_out, rank_b) = ab["A"].shape, ab["B"].shape
    ne_in, ne_out = base_shapes[name][:2]
    if (n_in, n_out, rank) != (ne_in, ne_out, rank_b):
        raise ValueError(f"LoRA for {name}: A {ab['A'].shape}, B {ab['B'].shape} do not fit "
                         f"the base tensor (ne {base_shapes[name]})")
