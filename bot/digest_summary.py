"""Digest summaries: the configured chat model retells a plain digest, booked against the budget.

The call is metered like every model call (`graphs.llm.metered`: worst case reserved,
settled after). Whenever the summary cannot be had — the budget is spent, the ledger is
unavailable, the model fails or returns nothing usable — the plain digest is kept and the
reason logged: a summary never stops a digest from being sent. A link in the summary that
the digest itself does not hold is defanged and recorded (`graphs.agent.links`).
"""

from __future__ import annotations

import logging

from bot.events import ChatRef
from graphs.agent.links import defang_untrusted, record_untrusted_links
from graphs.llm.metered import BudgetRefusedError, Meter, metered_call
from graphs.llm.types import ChatMessage, ChatModel, ProviderError
from storage.incidents import IncidentRepository
from storage.users import User

__all__ = ["SUMMARY_MAX_TOKENS", "DigestSummariser", "summary_prompt"]

logger = logging.getLogger(__name__)

SUMMARY_MAX_TOKENS = 300


def summary_prompt(name: str) -> str:
    """The system prompt asking for a short, faithful retelling of `name`'s digest."""
    return (
        f"Summarise this morning digest for {name} in a few friendly sentences; "
        "keep every document title; do not invent anything."
    )


class DigestSummariser:
    """Turns a plain digest into a few friendly sentences, or leaves it as it is."""

    def __init__(
        self,
        *,
        model: ChatModel,
        meter: Meter,
        incidents: IncidentRepository,
        max_tokens: int = SUMMARY_MAX_TOKENS,
    ) -> None:
        self._model = model
        self._meter = meter
        self._incidents = incidents
        self._max_tokens = max_tokens

    async def summarise(self, user: User, chat: ChatRef, digest: str) -> str:
        """The model's summary of `digest` for `user` (sent into `chat`), or `digest` itself
        when there is none."""
        text = await self._summary(user.display_name, digest)
        if text is None:
            return digest
        checked = defang_untrusted(text, [digest])
        await record_untrusted_links(
            self._incidents,
            checked,
            where="a digest summary",
            platform=chat.platform,
            chat_id=chat.chat_id,
            user_id=user.id,
        )
        return checked.text

    async def _summary(self, name: str, digest: str) -> str | None:
        messages = [ChatMessage("system", summary_prompt(name)), ChatMessage("user", digest)]
        try:
            call = await metered_call(
                self._meter,
                self._model,
                messages,
                purpose="digest summary",
                max_tokens=self._max_tokens,
            )
        except BudgetRefusedError as exc:
            logger.info("Digest summary skipped (%s); plain list sent", exc.reason)
            return None
        except ProviderError as exc:
            logger.warning("Digest summary failed, plain list sent: %s", exc)
            return None
        completion = call.completion
        text = completion.text.strip()
        if not text or completion.finish_reason == "length":
            # A cut-off summary may have dropped titles; the plain list has them all.
            logger.info(
                "Digest summary unusable (finish: %s); plain list sent", completion.finish_reason
            )
            return None
        return text
