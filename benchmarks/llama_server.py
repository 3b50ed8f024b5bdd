"""Start the shared llama.cpp server (SmolLM2-135M-Instruct, `../shared/tools/llm/`) on a free
loopback port for a benchmark, and stop it afterwards.

    async with llama_server() as server:
        print(server.base_url)      # http://127.0.0.1:PORT/v1, model `server.model`

`LLM_TOOLS_DIR` (default: `../shared/tools/llm` beside the repository) holds
`serve-smollm2.sh`, which unpacks the binary and the model once into `~/.cache/lore-llm`.
With `--llm-url` a benchmark uses a server that is already running instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx

__all__ = ["MODEL", "LlamaServer", "llama_server", "tools_dir"]

MODEL = "smollm2-135m-instruct"
_STARTUP_SECONDS = 180.0


@dataclass(frozen=True, slots=True)
class LlamaServer:
    """A running OpenAI-compatible server: where it listens and the model it serves."""

    base_url: str
    model: str = MODEL


def tools_dir() -> Path:
    """Where the shared model server's scripts are."""
    configured = os.environ.get("LLM_TOOLS_DIR")  # noqa: TID251 - a benchmark's own knob
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[2] / "shared" / "tools" / "llm"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _wait_ready(base_url: str, process: asyncio.subprocess.Process) -> None:
    health = base_url.removesuffix("/v1") + "/health"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _STARTUP_SECONDS
    async with httpx.AsyncClient(timeout=2.0) as client:
        while loop.time() < deadline:
            if process.returncode is not None:
                raise RuntimeError(f"the model server exited with {process.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get(health)).status_code == httpx.codes.OK:
                    return
            await asyncio.sleep(0.5)
    raise RuntimeError("the model server did not become ready in time")


@contextlib.asynccontextmanager
async def llama_server(url: str | None = None) -> AsyncIterator[LlamaServer]:
    """The server at `url` if given, else the shared llama.cpp server on a free port."""
    if url:
        yield LlamaServer(url.rstrip("/"))
        return
    script = tools_dir() / "serve-smollm2.sh"
    if not script.is_file():
        raise RuntimeError(f"{script} is missing: set LLM_TOOLS_DIR or pass --llm-url")
    port = _free_port()
    process = await asyncio.create_subprocess_exec(
        "bash",
        str(script),
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        await _wait_ready(base_url, process)
        yield LlamaServer(base_url)
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            await process.wait()
