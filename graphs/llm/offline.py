"""`OfflineModel`: the no-key, no-network `ChatModel` — a rule-based tool router plus an
extractive answerer that quotes retrieved passages with numbered citations.

Each call looks at the conversation since the last user message:

- no tool results yet (and `tool_choice` is not "none"): route the user message
  (`graphs.llm.offline_router`, rules in its docstring) to tool calls, or reply directly
  (greetings, help, a request that cannot be served in this chat);
- a share request whose private search found a note at or above the threshold, and no
  share result yet: call share_to_knowledge with that note's document id;
- a question about past conversations ("what did I ask you yesterday?"): call
  search_memory with the days resolved from today's date in the system prompt
  (`graphs.llm.offline_memory`), or ask back when the date is ambiguous; then quote the
  exchanges found with their time and "[ref]";
- otherwise answer from the tool results (`graphs.llm.offline_answer`): approval
  outcomes are confirmed, a fetched document is shown, passages at or above the
  threshold are quoted with "[ref]" citations, and with none the answer is a refusal
  (`Completion.finish_reason == "refusal"`, `is_refusal(text)`).

Refusals, the words around quotes, tool outcomes and apologies are in the question's
language when it is clear, else in the default `language` (`graphs.llm.offline_language`).
Only tools named in `tools` are ever called. Same input, same output: there is no
randomness and no clock. Usage is estimated as ceil(characters / 4).
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import date

from graphs.llm.offline_answer import (
    Answer,
    Source,
    ToolResults,
    read_tool_results,
    refusal,
    search_answer,
)
from graphs.llm.offline_language import DEFAULT_LANGUAGE, answer_language, is_refusal
from graphs.llm.offline_memory import Clarify, memory_answer, memory_request, today_from_prompt
from graphs.llm.offline_replies import document_answer, error_answer, outcome_answer
from graphs.llm.offline_router import Route, route
from graphs.llm.types import (
    ChatMessage,
    Completion,
    ModelEvent,
    TextDelta,
    ToolCall,
    ToolChoice,
    ToolSpec,
    Usage,
)

__all__ = [
    "DEFAULT_MIN_COVERAGE",
    "DEFAULT_THRESHOLD",
    "MODEL_NAME",
    "OfflineModel",
    "is_refusal",
]

MODEL_NAME = "offline-extractive"
#: Lowest relevance (cosine, all-MiniLM-L6-v2) a passage needs to be quoted. Calibrated on
#: docs/ with `python -m benchmarks.offline_answers`: off-topic questions peak at 0.18,
#: on-topic ones start at 0.29 (paraphrases) and 0.475 (direct questions); 0.30 sits above
#: the gap's midpoint because a bigger knowledge base raises the off-topic peak.
DEFAULT_THRESHOLD = 0.30
#: Share of the question's content words the quoted passages must hold, else a refusal
#: (0 turns it off). It refuses "near misses" (on the subject, answer not stored) that
#: cosine cannot tell from answerable questions.
DEFAULT_MIN_COVERAGE = 0.25

SEARCH_KNOWLEDGE = "search_knowledge"
SEARCH_PRIVATE = "search_private"
GET_ENTRY = "get_entry"
CONTACT = "draft_contact_message"
SHARE = "share_to_knowledge"
SEARCH_MEMORY = "search_memory"


@dataclass(frozen=True, slots=True)
class _Step:
    """What one call produces: tool calls, or an answer."""

    calls: tuple[tuple[str, dict[str, str]], ...] = ()
    answer: Answer | None = None


class OfflineModel:
    """A deterministic `ChatModel` that needs no key and no network."""

    def __init__(
        self,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        min_coverage: float = DEFAULT_MIN_COVERAGE,
        language: str = DEFAULT_LANGUAGE,
    ) -> None:
        """`threshold`: lowest relevance quoted; `min_coverage`: lowest share of the
        question's content words the quoted passages must hold, else a refusal;
        `language`: the language of replies to a question whose own is not clear."""
        self._threshold = threshold
        self._min_coverage = min_coverage
        self._language = language

    @property
    def name(self) -> str:
        """The model name used for pricing and the turn log."""
        return MODEL_NAME

    @property
    def threshold(self) -> float:
        """The relevance below which passages are not quoted."""
        return self._threshold

    @property
    def min_coverage(self) -> float:
        """The share of the question's content words an answer's passages must hold."""
        return self._min_coverage

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
        max_tokens: int = 1024,
    ) -> AsyncIterator[ModelEvent]:
        """Yield the answer as several `TextDelta`s then one `Completion`, or just a
        `Completion` carrying tool calls."""
        offered = frozenset(tool.name for tool in tools)
        step = self._step(messages, offered, tool_choice, max_chars=max_tokens * 4)
        calls = tuple(
            ToolCall(f"offline-{len(messages)}-{index}", name, json.dumps(arguments))
            for index, (name, arguments) in enumerate(step.calls)
        )
        answer = step.answer
        for part in answer.parts if answer is not None else ():
            yield TextDelta(part)
        text = answer.text if answer is not None else ""
        completion_chars = len(text) + sum(len(c.name) + len(c.arguments) for c in calls)
        yield Completion(
            text=text,
            tool_calls=calls,
            usage=Usage(
                prompt_tokens=_tokens(sum(_message_chars(m) for m in messages)),
                completion_tokens=_tokens(completion_chars),
            ),
            model=MODEL_NAME,
            finish_reason="tool_calls" if calls else (answer.finish_reason if answer else "stop"),
        )

    def _step(
        self,
        messages: Sequence[ChatMessage],
        offered: frozenset[str],
        tool_choice: ToolChoice,
        *,
        max_chars: int,
    ) -> _Step:
        question, turn = _current_turn(messages)
        wanted = route(question)
        results = read_tool_results(turn)
        if tool_choice != "none" and not results.tools_run:
            if wanted.kind == "memory":
                return _memory_step(question, _today(messages), offered)
            step = _first_step(wanted, question, offered, answer_language(question, self._language))
            if not step.calls and tool_choice == "required" and SEARCH_KNOWLEDGE in offered:
                return _Step(calls=((SEARCH_KNOWLEDGE, {"query": question}),))
            return step
        if tool_choice != "none" and wanted.kind == "share" and SHARE not in results.tools_run:
            note = self._share_candidate(results)
            if note is not None and SHARE in offered:
                return _Step(calls=((SHARE, {"document_id": note.document_id}),))
        if wanted.kind == "memory" and SEARCH_MEMORY in results.tools_run:
            return _Step(answer=self._memory_answer(question, _today(messages), results))
        return _Step(answer=self._answer(question, wanted, results, offered, max_chars))

    def _memory_answer(self, question: str, today: date | None, results: ToolResults) -> Answer:
        if results.errors and not results.exchanges:
            return error_answer(results.errors[0])
        query, span = memory_request(question, today)
        if isinstance(span, Clarify):  # the call came from elsewhere; never guess a day
            return Answer((span.question,))
        return memory_answer(
            results.exchanges, span, topic=query != question.strip(), threshold=self._threshold
        )

    def _share_candidate(self, results: ToolResults) -> Source | None:
        notes = [p for p in results.passages if p.private and p.relevance >= self._threshold]
        return min(notes, key=lambda p: (-p.relevance, p.ref), default=None)

    def _share_answer(self, topic: str, results: ToolResults) -> Answer:
        """A share request that ends without a share result: why nothing was shared."""
        if results.errors:
            return error_answer(results.errors[0])
        note = self._share_candidate(results)
        if note is not None:  # found, but the call ran out of tool rounds
            return Answer(
                (
                    f"I found your note \u201c{note.title}\u201d [{note.ref}] but did not get "
                    "to share it; please ask me again.",
                )
            )
        about = f" about \u201c{topic}\u201d" if topic else ""
        return Answer((f"I couldn't find a note of yours{about}, so I haven't shared anything.",))

    def _answer(
        self,
        question: str,
        wanted: Route,
        results: ToolResults,
        offered: frozenset[str],
        max_chars: int,
    ) -> Answer:
        language = answer_language(question, self._language)
        if results.outcomes:
            tool, payload = results.outcomes[-1]
            return outcome_answer(tool, payload, language)
        if wanted.kind == "share":
            return self._share_answer(wanted.text, results)
        if results.documents:
            return document_answer(results.documents[0])
        group_note = wanted.private_ref and SEARCH_PRIVATE not in offered
        answer = search_answer(
            question,
            results.passages,
            threshold=self._threshold,
            group_note=group_note,
            min_coverage=self._min_coverage,
            max_chars=max_chars,
            language=language,
        )
        if answer is not None:
            return answer
        if results.errors:
            return error_answer(results.errors[0], language)
        return refusal(
            searched_private=SEARCH_PRIVATE in results.tools_run,
            group_note=group_note,
            language=language,
        )


def _current_turn(messages: Sequence[ChatMessage]) -> tuple[str, Sequence[ChatMessage]]:
    """The last user message and the messages after it."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return messages[index].content, messages[index + 1 :]
    return "", messages


def _today(messages: Sequence[ChatMessage]) -> date | None:
    """Today's date from the system prompt, if it states one."""
    system = next((m.content for m in messages if m.role == "system"), "")
    return today_from_prompt(system)


def _memory_step(question: str, today: date | None, offered: frozenset[str]) -> _Step:
    """Search past conversations over the days the question names, or ask which days."""
    if SEARCH_MEMORY not in offered:
        return _reply("I only look back at our conversations in a private chat with me.")
    query, span = memory_request(question, today)
    if isinstance(span, Clarify):
        return _reply(span.question)
    arguments = {"query": query}
    if span.first is not None:
        arguments["day_from"] = span.first.isoformat()
    if span.last is not None:
        arguments["day_to"] = span.last.isoformat()
    return _Step(calls=((SEARCH_MEMORY, arguments),))


def _first_step(wanted: Route, question: str, offered: frozenset[str], language: str) -> _Step:
    """Tool calls for a fresh user message, or a direct reply when no tool fits."""
    if wanted.kind == "greeting":
        return _Step(answer=_help(offered))
    if wanted.kind == "contact":
        return _contact_step(wanted.text, offered)
    if wanted.kind == "share":
        return _share_step(wanted.text, offered)
    if wanted.kind == "document" and GET_ENTRY in offered:
        return _Step(calls=((GET_ENTRY, {"document_id": wanted.text}),))
    first, second = (SEARCH_PRIVATE, SEARCH_KNOWLEDGE)[:: 1 if wanted.private_ref else -1]
    calls = tuple((name, {"query": question}) for name in (first, second) if name in offered)
    if not calls:
        return _Step(answer=refusal(searched_private=False, group_note=False, language=language))
    return _Step(calls=calls)


def _contact_step(message: str, offered: frozenset[str]) -> _Step:
    if CONTACT not in offered:
        return _reply("I can't pass messages to the owner from this chat.")
    if not message:
        return _reply(
            "What should I tell the owner? For example: "
            "\u201ctell the owner that the printer on floor 2 is broken\u201d."
        )
    return _Step(calls=((CONTACT, {"message": message}),))


def _share_step(topic: str, offered: frozenset[str]) -> _Step:
    if SEARCH_PRIVATE not in offered or SHARE not in offered:
        return _reply("I can only share your private notes from a private chat with me.")
    if not topic:
        return _reply(
            "Which note should I share? Tell me what it is about, for example: "
            "\u201cshare my note about the offsite with everyone\u201d."
        )
    return _Step(calls=((SEARCH_PRIVATE, {"query": topic}),))


def _reply(text: str) -> _Step:
    return _Step(answer=Answer((text,)))


def _help(offered: frozenset[str]) -> Answer:
    where = "the shared knowledge base"
    if SEARCH_PRIVATE in offered:
        where += " and your private notes"
    parts = [
        "Hi! I'm Lore. ",
        f"Ask me a question and I'll answer from {where}, quoting the passages I used "
        "with numbered sources. ",
        "When I find nothing relevant, I say so instead of guessing.",
    ]
    extras = []
    if CONTACT in offered:
        extras.append("pass a message to the owner (\u201ctell the owner that \u2026\u201d)")
    if SHARE in offered and SEARCH_PRIVATE in offered:
        extras.append(
            "share one of your notes with everyone (\u201cshare my note about \u2026\u201d)"
        )
    if extras:
        parts.append(f" I can also {' or '.join(extras)}; the owner approves those first.")
    if SEARCH_MEMORY in offered:
        parts.append(" Ask \u201cwhat did I ask you yesterday?\u201d to look back at our chats.")
    return Answer(tuple(parts))


def _message_chars(message: ChatMessage) -> int:
    calls = sum(len(call.name) + len(call.arguments) for call in message.tool_calls)
    return len(message.content) + calls


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)
