"""Tool calls a model writes as text are read as calls, and no markup survives into an answer
(`graphs.agent.answer_markup`): the formats of Hermes/Qwen, Llama 3, Mistral and bare JSON."""

from __future__ import annotations

import json

import pytest

from graphs.agent.answer_markup import looks_like_markup, read_text_calls, strip_markup

KNOWN = {"search_knowledge", "search_private", "get_entry"}

WRITTEN_CALLS = {
    "hermes, then prose": (
        '<tool_call>\n{"name": "search_knowledge", "arguments": {"query": "back up Lore"}}\n'
        "</tool_call>\n\nYou can't back up Lore.",
        ("search_knowledge", {"query": "back up Lore"}),
        "You can't back up Lore.",
    ),
    "hermes without its closing tag": (
        '<tool_call>\n{"name": "get_entry", "arguments": {"document_id": "4f9e21"}}',
        ("get_entry", {"document_id": "4f9e21"}),
        "",
    ),
    "llama python tag": (
        '<|python_tag|>{"name": "search_private", "parameters": {"query": "locker"}}<|eot_id|>',
        ("search_private", {"query": "locker"}),
        "",
    ),
    "llama function tag": (
        '<function=search_knowledge>{"query": "wifi"}</function>',
        ("search_knowledge", {"query": "wifi"}),
        "",
    ),
    "mistral": (
        'Sure. [TOOL_CALLS] [{"name": "get_entry", "arguments": {"document_id": "abc1"}}]',
        ("get_entry", {"document_id": "abc1"}),
        "Sure.",
    ),
    "bare json in a fence": (
        'Let me check.\n```json\n{"function": {"name": "search_knowledge", "arguments": '
        '"{\\"query\\": \\"parking\\"}"}}\n```',
        ("search_knowledge", {"query": "parking"}),
        "Let me check.",
    ),
}


@pytest.mark.parametrize(("text", "call", "rest"), WRITTEN_CALLS.values(), ids=WRITTEN_CALLS.keys())
def test_a_tool_call_written_as_text_is_read_as_a_call(
    text: str, call: tuple[str, dict[str, str]], rest: str
) -> None:
    found = read_text_calls(text, KNOWN)
    assert [(c.name, json.loads(c.arguments)) for c in found.calls] == [call]
    assert found.text == rest


def test_a_call_of_an_unknown_tool_runs_nothing_and_shows_nothing() -> None:
    found = read_text_calls('{"name": "back_up_to_file", "arguments": {}} Done.', KNOWN)
    assert found.calls == ()
    assert found.text == "Done."


def test_a_call_cut_off_by_the_token_limit_is_removed() -> None:
    cut = '<tool_call>\n{"name": "search_knowledge", "arguments": {"query": "backup_to_file_to'
    assert read_text_calls(cut, KNOWN) == read_text_calls("", KNOWN)
    bare = 'I will search. {"name": "search_knowledge", "arguments": {"query": "back'
    assert strip_markup(bare, KNOWN) == "I will search."


def test_imitated_tool_responses_and_template_tokens_are_removed() -> None:
    echo = '<tool_response>\n{"ref": "Lore FAQ", "text": "Lore runs"}\n</tool_response>'
    assert strip_markup(echo + "\nIt runs offline [1].<|im_end|>") == "It runs offline [1]."
    assert strip_markup("<<data from search_knowledge 0123456789abcdef>>\n{}") == ""


def test_json_that_names_no_tool_stays_but_reads_as_markup() -> None:
    answer = 'Set `{"timeout": 30}` in the config file [2].'
    assert strip_markup(answer, KNOWN) == answer
    assert looks_like_markup(answer)
    assert not looks_like_markup("The office opens at 8 am [1].")
