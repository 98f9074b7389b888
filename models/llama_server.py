"""The embedded default chat model: llama.cpp's OpenAI-compatible HTTP server, in a child process.

`python -m models.llama_server` runs `xllamacpp.Server` for one GGUF file on a local port;
`EmbeddedServer` starts that child and the rest of MemoryReel talks to it exactly as to any
remote endpoint, through `models.llm.OpenAIChat`. What the server does for us:

- JSON-schema output: `response_format={"type": "json_schema", ...}` is turned into a grammar,
  so even a 0.5B model returns JSON of the right shape.
- Prompt caching (`cache_prompt`): a request that shares a prefix with an earlier one on the
  same slot only evaluates the new tokens. With `n_parallel` slots, each request goes to the
  slot whose cached prompt is most similar, so the planner and the SQL sub-agents keep their
  own prefixes warm. `kv_unified` lets every slot use the whole `n_ctx`.

Why a child process: llama.cpp in the same process as decord breaks (decord's bundled C++
runtime makes llama.cpp's std::random_device fail, then crash), an xllamacpp shutdown can hang
at exit, and a native crash in the LLM must not take the web app down with it.

With a multimodal projector (`mmproj_path`) the same server takes images in chat messages, as
OpenAI's vision API does: models/captioner.py captions frames through it. With a GGUF LoRA
adapter (`lora_path`, written by models/distill.py) every reply comes from the base model with
the adapter applied at scale 1.

The server binds 127.0.0.1 only and requires a random API key on every route but `/health`
(llama.cpp keeps that one public, and this xllamacpp has no option to change it; it reveals
only that a server is up). llama.cpp answers every CORS origin by default, so any page open in
a browser could read its replies: CORS is limited to the server's own origin, where no page is
served (the web UI is off), credentials are not allowed, and the /slots endpoint (which shows
cached prompts) is off. A Unix socket would hide it from browsers entirely, but was not tried:
the OpenAI client in models/llm.py connects over TCP.
"""

from __future__ import annotations

import argparse
import atexit
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from models.llm import LLMBadReply, LLMError, LLMUnavailable, OpenAIChat

_CACHE: dict[tuple, "EmbeddedServer"] = {}
_LOCK = threading.Lock()       # guards _CACHE
_STARTING = threading.Lock()   # held while a server starts
_START_TIMEOUT_S = 180.0


class EmbeddedServer:
    """llama.cpp's HTTP server for one GGUF file on `base_url`, in a child process, until `close()`."""

    def __init__(self, model_path: Path, n_ctx: int = 8192, threads: int = 2,
                 host: str = "127.0.0.1", port: int = 0, n_parallel: int = 4,
                 cache_ram_mib: int = 1024, verbosity: int = 1, mmproj_path: Path | None = None,
                 lora_path: Path | None = None):
        """port=0 picks a free port. verbosity: 1 = errors only, 3 = all. mmproj_path: the
        multimodal projector GGUF that lets the model see images. lora_path: a GGUF LoRA
        adapter for this model, applied to every request."""
        model_path = Path(model_path)
        _check_gguf(model_path, "model")
        if mmproj_path is not None:
            _check_gguf(Path(mmproj_path), "multimodal projector")
        if lora_path is not None:
            _check_gguf(Path(lora_path), "LoRA adapter")
        self.model_path = model_path
        self.name = model_path.stem
        self._api_key = secrets.token_urlsafe(24)
        port = port or _free_port(host)
        self.base_url = f"http://{host}:{port}/v1"
        command = [sys.executable, "-m", "models.llama_server", *server_arguments(
            model_path, host, port, n_ctx, threads, n_parallel, cache_ram_mib, verbosity,
            mmproj_path, lora_path)]
        env = dict(os.environ, MEMORYREEL_LLAMA_API_KEY=self._api_key)
        self._process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE,
                                         cwd=Path(__file__).resolve().parents[1])
        files = str(model_path)
        if mmproj_path is not None:
            files += f" and projector {mmproj_path}"
        if lora_path is not None:
            files += f" and LoRA {lora_path}"
        self._wait_until_ready(files)

    def _wait_until_ready(self, files: Path | str) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        probe = OpenAIChat(self.base_url, self.name, api_key=self._api_key, timeout=60.0)
        while True:
            if self._process.poll() is not None:
                raise LLMUnavailable(
                    f"the embedded llama.cpp server failed to start with {files}: it exited "
                    f"(status {self._process.returncode}); a file may be damaged or of the wrong "
                    f"kind, or memory short.")
            try:
                probe.complete([{"role": "user", "content": "hi"}], max_tokens=1)
                return
            except LLMBadReply:
                return  # it answered; one token may be blank
            except LLMError as exc:
                if time.monotonic() > deadline:
                    self.close()
                    raise LLMUnavailable(f"the embedded llama.cpp server for {files} did "
                                         f"not answer within {_START_TIMEOUT_S:.0f} s: {exc}") from None
                time.sleep(0.5)

    @property
    def running(self) -> bool:
        return self._process.poll() is None

    def client(self, timeout: float = 300.0) -> OpenAIChat:
        if not self.running:
            raise LLMUnavailable(f"the embedded llama.cpp server for {self.name} is not running.")
        return OpenAIChat(self.base_url, self.name, api_key=self._api_key, timeout=timeout)

    def close(self) -> None:
        """Stop the child process. Safe to call twice."""
        with _LOCK:
            for key in [k for k, v in _CACHE.items() if v is self]:
                del _CACHE[key]
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def __enter__(self) -> "EmbeddedServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmbeddedServer({self.model_path.name}, {self.base_url if self.running else 'closed'})"


def server_arguments(model_path: Path, host: str, port: int, n_ctx: int, threads: int,
                     n_parallel: int, cache_ram_mib: int, verbosity: int,
                     mmproj_path: Path | None = None, lora_path: Path | None = None) -> list[str]:
    """The child's command-line arguments (`parser` reads them back)."""
    arguments = ["--model", str(model_path), "--host", host, "--port", str(port),
                 "--ctx", str(n_ctx), "--threads", str(threads), "--parallel", str(n_parallel),
                 "--cache-ram-mib", str(cache_ram_mib), "--verbosity", str(verbosity)]
    arguments += ["--mmproj", str(mmproj_path)] if mmproj_path is not None else []
    return arguments + (["--lora", str(lora_path)] if lora_path is not None else [])


def get_embedded(model_path: Path, n_ctx: int = 8192, threads: int = 2,
                 mmproj_path: Path | None = None, lora_path: Path | None = None) -> EmbeddedServer:
    """The process's server for this model and settings, started on first use."""
    key = (str(Path(model_path).resolve()), n_ctx, threads,
           str(Path(mmproj_path).resolve()) if mmproj_path else "",
           str(Path(lora_path).resolve()) if lora_path else "")
    running = _running(key)
    if running is not None:
        return running
    # One start at a time (seconds): a second thread asking at once, e.g. a question beside the
    # app's warm-up, waits for that server instead of starting one of its own.
    with _STARTING:
        running = _running(key)
        if running is not None:
            return running
        server = EmbeddedServer(Path(model_path), n_ctx=n_ctx, threads=threads,
                                mmproj_path=mmproj_path, lora_path=lora_path)
        with _LOCK:
            _CACHE[key] = server
        return server


def _running(key: tuple) -> EmbeddedServer | None:
    with _LOCK:
        server = _CACHE.get(key)
    return server if server is not None and server.running else None


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _check_gguf(path: Path, role: str) -> None:
    if not path.is_file():
        raise LLMUnavailable(f"cannot start the embedded LLM: {role} file {path} does not exist.")
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise LLMUnavailable(f"cannot start the embedded LLM: {role} file {path} is not a "
                                 "GGUF file.")


@atexit.register
def _close_all() -> None:
    for server in list(_CACHE.values()):
        server.close()


def server_params(args: argparse.Namespace, api_key: str):
    """xllamacpp's CommonParams for the child's command line (see `parser`)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {Path(args.model).stem}
    params.n_ctx = args.ctx
    params.n_parallel = args.parallel
    params.kv_unified = True
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.hostnames = [args.host]
    params.port = args.port
    params.api_keys = [api_key]
    params.cache_prompt = True
    params.cache_ram_mib = args.cache_ram_mib  # host-memory cache of evicted slot prompts
    params.ui = False
    # Browsers may read replies only for pages from the server's own origin, which serves none.
    params.cors_origins = f"http://{args.host}:{args.port}"
    params.cors_origins_explicit = True
    params.cors_credentials = False
    params.endpoint_slots = False
    params.verbosity = args.verbosity
    if args.mmproj:
        params.mmproj.path = args.mmproj
    if args.lora:
        params.lora_adapters = [xllamacpp.CommonAdapterLoraInfo(args.lora, 1.0)]
    return params


def _serve(args: argparse.Namespace) -> None:
    """The child: run the server until the parent closes our stdin or terminates us."""
    import xllamacpp

    params = server_params(args, os.environ["MEMORYREEL_LLAMA_API_KEY"])
    try:
        server = xllamacpp.Server(params)  # noqa: F841 - serves from its own threads while alive
    except RuntimeError as e:  # xllamacpp only says "Failed to init server"
        print(f"llama.cpp server: {e}", file=sys.stderr)
        sys.exit(1)
    sys.stdin.read()  # returns when the parent exits or closes the pipe
    os._exit(0)  # skip xllamacpp's destructor, which can hang


def parser() -> argparse.ArgumentParser:
    """The child's command line, as `server_command` writes it."""
    parser = argparse.ArgumentParser(description="MemoryReel's embedded llama.cpp server")
    parser.add_argument("--model", required=True)
    parser.add_argument("--mmproj", default="", help="multimodal projector GGUF")
    parser.add_argument("--lora", default="", help="GGUF LoRA adapter, applied at scale 1")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--cache-ram-mib", type=int, default=1024)
    parser.add_argument("--verbosity", type=int, default=1)
    return parser


if __name__ == "__main__":
    _serve(parser().parse_args())
