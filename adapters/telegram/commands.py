"""Slash commands: /start with an invite code, /help, /note, /sources, /forget, /digest, /link,
and for owners /invite, /budget, /approvals, /unanswered, /share. Each one asks the `Bot`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from telegram import BotCommand, Chat, Message, User

from adapters.telegram.buttons import approval_keyboard, forget_keyboard
from adapters.telegram.context import EdgeContext, PendingSource, chat_ref, identity_of
from adapters.telegram.ingest_chat import offer_or_ingest, run_ingest
from adapters.telegram.rendering import escape
from adapters.telegram.streaming import StatusMessage
from bot.conversation import LINK_REPLIES, NOT_INVITED
from bot.errors import LoreError
from bot.ingest_requests import UserId

__all__ = ["MEMBER_COMMANDS", "OWNER_COMMANDS", "run_command"]

MEMBER_COMMANDS = (
    BotCommand("start", "Start, or join with an invite code"),
    BotCommand("help", "What I can do"),
    BotCommand("digest", "Morning digest: /digest 07:30 Europe/Berlin"),
    BotCommand("sources", "List your private documents"),
    BotCommand("forget", "Delete your private documents"),
    BotCommand("link", "Link this account with another chat app"),
)
OWNER_COMMANDS = (
    *MEMBER_COMMANDS,
    BotCommand("invite", "Create an invite link for a new member"),
    BotCommand("budget", "Today's spending against the cap"),
    BotCommand("approvals", "Requests waiting for your decision"),
    BotCommand("unanswered", "Questions the knowledge could not answer"),
    BotCommand("share", "Share a document from /sources, or a note"),
    BotCommand("watch", "Follow a feed or page for the shared knowledge"),
    BotCommand("watches", "List the watched feeds and pages"),
    BotCommand("unwatch", "Stop following a feed or page"),
)

HELP = (
    "Ask me anything about the knowledge base and I answer with numbered sources.\n"
    "Send me a file, a link or a forwarded message and I remember it in your private notes; "
    "/note TEXT saves a note.\n"
    "/sources lists what you saved, /forget deletes it.\n"
    "/link gives a code that joins your account in another chat app to this one.\n"
    "/digest 07:30 Europe/Berlin sends you a morning digest (/digest off stops it).\n"
    "In group chats, mention me or reply to me; there I only use the shared knowledge."
)
OWNER_HELP = (
    "\n\nOwner: /invite makes an invite link, /budget shows today's spending, "
    "/approvals lists waiting requests, /unanswered shows questions without a source, "
    "/share NUMBER publishes that document from /sources to the shared knowledge, "
    "/share TEXT adds a note there. Files and links you send ask "
    "Private or Shared. /watch URL follows a feed or page for the shared knowledge; "
    "/watches lists them, /unwatch URL stops one."
)
SOURCES_SHOWN = 30

Command = Callable[["CommandCall"], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class CommandCall:
    """One command as sent: where, by whom (Telegram user and Lore caller), with what words."""

    edge: EdgeContext
    message: Message
    sender: User
    args: str
    caller: Caller


class Caller:
    """Who sent a command: registered or not, owner or member."""

    def __init__(self, user_id: UserId | None, role: str | None) -> None:
        self.user_id = user_id
        self.is_owner = role == "owner"

    @property
    def id(self) -> UserId:
        """The registered user's id (members' and owners' commands only)."""
        if self.user_id is None:
            raise RuntimeError("not a registered user")
        return self.user_id


async def _start(call: CommandCall) -> None:
    if call.caller.user_id is not None:
        await call.message.reply_text("Welcome back! " + HELP)
        return
    code = call.args.strip()
    if not code:
        await call.message.reply_text(NOT_INVITED)
        return
    user = await call.edge.bot.conversations.redeem_invite(identity_of(call.sender), code)
    if user is None:
        await call.message.reply_text(
            "That invite link is not valid any more (used or expired). Ask the owner for a new one."
        )
        return
    await call.message.reply_text(f"Welcome, {user.display_name}! " + HELP)


async def _help(call: CommandCall) -> None:
    await call.message.reply_text(HELP + (OWNER_HELP if call.caller.is_owner else ""))


async def _note(call: CommandCall) -> None:
    if not call.args.strip():
        await call.message.reply_text("Usage: /note TEXT")
        return
    title = " ".join(call.args.split())[:60]
    source = PendingSource(call.sender.id, text=call.args.strip(), title=title)
    await offer_or_ingest(call.edge, call.message, source, owner=False, user_id=call.caller.id)


async def _share(call: CommandCall) -> None:
    text = call.args.strip()
    if not text:
        await call.message.reply_text(
            "Usage: /share NUMBER (a document from /sources), /share TEXT (a note), "
            "or send me a file or link and tap Shared."
        )
        return
    if text.isdigit():
        await _share_document(call, int(text))
        return
    source = PendingSource(call.sender.id, text=text, title=" ".join(text.split())[:60])
    bot = call.message.get_bot()
    status = StatusMessage(bot, call.message.chat_id, interval=call.edge.config.stream_interval)
    await status.start("📥 Received, working on it…")
    await run_ingest(
        call.edge.bot, bot, status, source, owner_id=None, limit=call.edge.config.download_limit
    )


async def _share_document(call: CommandCall, number: int) -> None:
    """Publish the private document numbered `number` in /sources to the shared knowledge."""
    documents = await call.edge.bot.sources(call.caller.id)
    if not 1 <= number <= len(documents):
        await call.message.reply_text(f"/sources has no document number {number}.")
        return
    try:
        title = await call.edge.bot.share_document(
            identity_of(call.sender), documents[number - 1].id
        )
    except LoreError as exc:
        await call.message.reply_text(f"🚫 {exc}")
        return
    await call.message.reply_html(
        f"🌐 Shared: <b>{escape(title)}</b> is now in the shared knowledge "
        "(your private copy stays)."
    )


async def _sources(call: CommandCall) -> None:
    documents = await call.edge.bot.sources(call.caller.id)
    if not documents:
        await call.message.reply_text(
            "You have no private documents yet. Send me a file or a link."
        )
        return
    lines = [f"<b>Your private documents</b> ({len(documents)})"]
    for number, document in enumerate(documents[:SOURCES_SHOWN], start=1):
        source = document.source_ref
        label = (
            f'<a href="{escape(source)}">{escape(document.title)}</a>'
            if source.startswith(("http://", "https://"))
            else escape(document.title)
        )
        lines.append(f"{number}. {label} <i>({document.created_at[:10]})</i>")
    if len(documents) > SOURCES_SHOWN:
        lines.append(f"… and {len(documents) - SOURCES_SHOWN} more.")
    await call.message.reply_html("\n".join(lines), disable_web_page_preview=True)


async def _forget(call: CommandCall) -> None:
    documents = await call.edge.bot.sources(call.caller.id)
    if not documents:
        await call.message.reply_text("You have no private documents to forget.")
        return
    await call.message.reply_text(
        f"Delete all {len(documents)} of your private documents? This cannot be undone.",
        reply_markup=forget_keyboard(),
    )


DIGEST_USAGE = (
    "Usage: /digest 07:30 Europe/Berlin (add 'quiet' to skip days with nothing new), "
    "/digest off, /digest now."
)


async def _digest(call: CommandCall) -> None:
    bot, identity = call.edge.bot, identity_of(call.sender)
    words = call.args.split()
    try:
        if words == ["off"]:
            stopped = await bot.digest_off(identity)
            await call.message.reply_text(
                "Morning digests are off." if stopped else "Your morning digest was not on."
            )
        elif words == ["now"]:
            await bot.digest_now(identity, chat_ref(call.message.chat))
        elif len(words) in (2, 3) and words[2:] in ([], ["quiet"]):
            quiet = len(words) == 3
            schedule = await bot.set_digest(
                identity, chat_ref(call.message.chat), words[0], words[1], quiet_days=quiet
            )
            await call.message.reply_text(
                f"Your morning digest comes here at {schedule.local_time} ({schedule.timezone})"
                + (", and not at all on days with nothing new." if quiet else ".")
            )
        else:
            await call.message.reply_text(DIGEST_USAGE)
    except LoreError as exc:
        await call.message.reply_text(str(exc))


async def _link(call: CommandCall) -> None:
    """`/link` makes a one-time code; `/link CODE` (from anyone) makes this account the code's.
    Only in a private chat: a code shown in a group could be taken by anyone there."""
    if call.message.chat.type != Chat.PRIVATE:
        await call.message.reply_text("Send /link to me in a private chat.")
        return
    identity = identity_of(call.sender)
    if call.args.strip():
        result = await call.edge.bot.link_identity(identity, call.args.strip())
        await call.message.reply_text(LINK_REPLIES[result.outcome])
        return
    code = await call.edge.bot.create_link_code(identity)
    if code is None:
        await call.message.reply_text(NOT_INVITED)
        return
    minutes = round((code.expires_at - code.created_at).total_seconds() / 60)
    await call.message.reply_text(
        f"Linking accounts: from your other account (another chat app, or the terminal chat) "
        f"send\n/link {code.display}\nwithin {minutes} minutes. The code works once; both "
        "accounts then share your private notes."
    )


async def _invite(call: CommandCall) -> None:
    invite = await call.edge.bot.conversations.create_invite(identity_of(call.sender))
    if invite is None:
        await call.message.reply_text("Only an owner can invite.")
        return
    link = f"https://t.me/{call.message.get_bot().username}?start={invite.code}"
    await call.message.reply_text(
        f"Send this link to the new member (valid until {invite.expires_at:%Y-%m-%d}, "
        f"one use):\n{link}"
    )


async def _budget(call: CommandCall) -> None:
    report = await call.edge.bot.budget_report()
    await call.message.reply_text(
        f"Today ({report.day}): ${report.spent_usd:.4f} of ${report.cap_usd:.2f} spent."
    )


async def _approvals(call: CommandCall) -> None:
    pending = await call.edge.bot.conversations.pending_approvals()
    if not pending:
        await call.message.reply_text("No requests are waiting.")
    for approval in pending:
        await call.message.reply_html(
            f"🔔 {escape(approval.summary)}\n<i>until {approval.expires_at:%Y-%m-%d %H:%M} UTC</i>",
            reply_markup=approval_keyboard(approval.id),
        )


async def _unanswered(call: CommandCall) -> None:
    questions = await call.edge.bot.unanswered()
    if not questions:
        await call.message.reply_text("Every question so far found a source.")
        return
    lines = ["<b>Questions without a source</b>"]
    lines += [f"{q.created_at:%Y-%m-%d %H:%M}  {escape(q.question)}" for q in questions]
    await call.message.reply_html("\n".join(lines))


async def _watch(call: CommandCall) -> None:
    try:
        added = await call.edge.bot.watch(identity_of(call.sender), call.args.strip())
    except LoreError as exc:
        await call.message.reply_text(str(exc))
        return
    source = added.source
    if not added.created:
        await call.message.reply_text(f"I already watch that (number {source.id}, see /watches).")
        return
    what = f"the feed {source.title!r}" if source.title else f"the {source.kind or 'page'}"
    count = f" ({added.entries} entries now)" if added.entries is not None else ""
    await call.message.reply_text(
        f"👀 Watching {what}{count}, number {source.id}. What is new goes into the shared "
        "knowledge at the next scan."
    )


async def _watches(call: CommandCall) -> None:
    sources = await call.edge.bot.watches()
    if not sources:
        await call.message.reply_text("I watch nothing yet. Add a feed or page with /watch URL.")
        return
    lines = [f"<b>Watched sources</b> ({len(sources)})"]
    for source in sources:
        label = escape(source.title or source.url)
        state = escape(source.last_error or (source.last_status or "not checked yet"))
        due = f"{source.next_check_at:%Y-%m-%d %H:%M}"
        lines.append(
            f'{source.id}. <a href="{escape(source.url)}">{label}</a> '
            f"<i>({source.kind or '?'}; {state}; next {due} UTC)</i>"
        )
    await call.message.reply_html("\n".join(lines), disable_web_page_preview=True)


async def _unwatch(call: CommandCall) -> None:
    try:
        removed = await call.edge.bot.unwatch(identity_of(call.sender), call.args.strip())
    except LoreError as exc:
        await call.message.reply_text(str(exc))
        return
    if removed is None:
        await call.message.reply_text("I don't watch that. /watches lists what I watch.")
        return
    await call.message.reply_text(
        f"Stopped watching {removed.url}. What it brought stays in the shared knowledge."
    )


PUBLIC: dict[str, Command] = {"start": _start, "help": _help, "link": _link}
MEMBERS: dict[str, Command] = {
    "note": _note,
    "sources": _sources,
    "forget": _forget,
    "digest": _digest,
}
OWNERS: dict[str, Command] = {
    "invite": _invite,
    "budget": _budget,
    "approvals": _approvals,
    "unanswered": _unanswered,
    "share": _share,
    "watch": _watch,
    "watches": _watches,
    "unwatch": _unwatch,
}


async def run_command(
    edge: EdgeContext, message: Message, sender: User, name: str, args: str
) -> None:
    """Run `/name args` for `sender`, if they may."""
    user = await edge.bot.conversations.user_for(identity_of(sender))
    caller = Caller(user.id if user else None, user.role.value if user else None)
    call = CommandCall(edge, message, sender, args, caller)
    if name in PUBLIC:
        await PUBLIC[name](call)
    elif caller.user_id is None:
        await message.reply_text(NOT_INVITED)
    elif name in MEMBERS:
        await MEMBERS[name](call)
    elif name in OWNERS and caller.is_owner:
        await OWNERS[name](call)
    elif name in OWNERS:
        await message.reply_text(f"Only an owner can use /{name}.")
    else:
        await message.reply_text(f"I don't know /{name}. Try /help.")
