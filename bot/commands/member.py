"""Commands for everyone and for members: joining, help, account links, notes, the
member's own documents, morning digests and a fresh conversation."""

from __future__ import annotations

from bot.commands.registry import Access, Command, CommandCall, Place
from bot.errors import NOT_INVITED, NotFoundError, UsageError
from bot.people import LOCAL_PLATFORM
from bot.replies import (
    Confirmation,
    Message,
    Reply,
    Rich,
    Span,
    bold,
    code,
    italic,
    link,
    plain,
    rich,
)
from bot.sources import kind_icon, note
from storage.documents import DocumentRecord
from storage.users import Role

__all__ = ["MEMBER_COMMANDS", "help_text"]

SOURCES_SHOWN = 30
INTRO = (
    "Ask me anything about the knowledge base and I answer with numbered sources.\n"
    "Send me a file, a link or a forwarded message and I remember it in your private notes.\n"
    "In group chats and channels, mention me (or reply to me); there I only use the shared "
    "knowledge."
)


def help_text(call: CommandCall) -> str:
    """The intro and the commands this caller may run here."""
    owner = call.caller is not None and call.caller.role is Role.OWNER
    local = call.identity.platform == LOCAL_PLATFORM
    commands = call.registry.available(owner=owner, local=local)
    lines = [command.line(call.prefix) for command in commands]
    return INTRO + "\n\nCommands:\n" + "\n".join(lines)


async def _start(call: CommandCall) -> Reply:
    if call.caller is not None:
        return Message(rich("Welcome back! " + help_text(call)))
    if not call.args.strip():
        return Message(rich(NOT_INVITED))
    user, _new = await call.services.accounts.redeem_invite(call.identity, call.args)
    joined = CommandCall(
        call.services, call.registry, call.identity, call.chat, call.args, user, call.prefix
    )
    return Message(rich(f"Welcome, {user.display_name}! " + help_text(joined)))


async def _help(call: CommandCall) -> Reply:
    return Message(rich(help_text(call)), personal=True)


async def _link(call: CommandCall) -> Reply:
    """`link` makes a one-time code; `link CODE` (from anyone) makes this account the code's."""
    accounts = call.services.accounts
    if call.args.strip():
        return Message(rich(await accounts.link_identity(call.identity, call.args.strip())))
    code = await accounts.create_link_code(call.identity)
    minutes = round((code.expires_at - code.created_at).total_seconds() / 60)
    return Message(
        rich(
            "Linking accounts: from your other account (another chat app, or the terminal "
            f"chat) send\n{call.spell('link')} {code.display}\nwithin {minutes} minutes. The "
            "code works once; both accounts then share your private notes."
        ),
        personal=True,
    )


async def _note(call: CommandCall) -> Reply:
    if not call.args.strip():
        raise UsageError(f"Usage: {call.spell('note')} TEXT")
    return await call.services.knowledge.save(call.identity, note(call.args), shared=False)


def _listed(document: DocumentRecord) -> Rich:
    source = document.source_ref
    label = (
        link(document.title, source)
        if source.startswith(("http://", "https://"))
        else plain(document.title)
    )
    return rich(
        f"\n{kind_icon(document)} ",
        code(document.handle),
        " ",
        label,
        " ",
        italic(f"({document.created_at[:10]})"),
    )


def _section(title: str, documents: list[DocumentRecord]) -> list[Span]:
    body: list[Span] = [bold(title), plain(f" ({len(documents)})")]
    for document in documents[:SOURCES_SHOWN]:
        body += _listed(document)
    if len(documents) > SOURCES_SHOWN:
        body += rich(f"\n… and {len(documents) - SOURCES_SHOWN} more.")
    return body


async def _sources(call: CommandCall) -> Reply:
    knowledge = call.services.knowledge
    documents = await knowledge.sources(call.identity)
    owner = call.caller is not None and call.caller.role is Role.OWNER
    shared = await knowledge.shared_sources(call.identity) if owner else []
    if not documents and not shared:
        return Message(rich("You have no private documents yet. Send me a file or a link."))
    body: list[Span] = []
    if documents:
        body += _section("Your private documents", documents)
    if shared:
        body += rich("\n\n" if body else "")
        body += _section("Shared knowledge", shared)
    forget = call.spell("forget")
    body += rich(f"\n\nDelete one with {forget} HANDLE (the code before its title).")
    return Message(tuple(body), personal=True)


async def _forget(call: CommandCall) -> Reply:
    knowledge = call.services.knowledge
    if call.words:
        if len(call.words) != 1:
            raise UsageError(f"Usage: {call.spell('forget')} [HANDLE from {call.spell('sources')}]")
        document = await knowledge.document(call.identity, call.words[0], include_shared=True)
        where = " from the shared knowledge" if document.owner_id is None else ""
        return Confirmation(
            rich("Delete ", bold(document.title), f"{where}? This cannot be undone."),
            f"forget:{document.id}",
            "🗑 Yes, delete it",
        )
    documents = await knowledge.sources(call.identity)
    if not documents:
        return Message(rich("You have no private documents to forget."))
    return Confirmation(
        rich(f"Delete all {len(documents)} of your private documents? This cannot be undone."),
        "forget:all",
        "🗑 Yes, delete them",
    )


async def _confirm_forget(call: CommandCall, target: str, yes: bool) -> Reply:
    if not yes:
        return Message(rich("Nothing was deleted."))
    forgetting = call.services.forgetting
    if target == "all":
        count = await forgetting.forget_all(call.identity)
        return Message(rich(f"🗑 Deleted your {count} private documents."))
    try:
        document = await call.services.knowledge.document(
            call.identity, target, include_shared=True
        )
    except NotFoundError:
        return Message(rich("That document is already gone."))
    title = await forgetting.forget_document(call.identity, document)
    return Message(rich("🗑 Deleted ", bold(title), "."))


def _digest_usage(call: CommandCall) -> str:
    digest = call.spell("digest")
    return (
        f"Usage: {digest} 07:30 Europe/Berlin (add 'quiet' to skip days with nothing new), "
        f"{digest} off, {digest} now."
    )


async def _digest(call: CommandCall) -> Reply | None:
    digests, words = call.services.digests, call.words
    if words == ["off"]:
        stopped = await digests.off(call.user)
        return Message(
            rich("Morning digests are off." if stopped else "Your morning digest was not on.")
        )
    if words == ["now"]:
        await digests.now(call.user, call.chat)
        return None  # the digest itself is the answer
    if len(words) in (2, 3) and words[2:] in ([], ["quiet"]):
        quiet = len(words) == 3
        schedule = await digests.set(call.user, call.chat, words[0], words[1], quiet_days=quiet)
        return Message(
            rich(
                f"Your morning digest comes here at {schedule.local_time} ({schedule.timezone})"
                + (", and not at all on days with nothing new." if quiet else ".")
            )
        )
    raise UsageError(_digest_usage(call))


async def _new(call: CommandCall) -> Reply:
    await call.services.conversations.new_conversation(call.user, call.chat)
    return Message(rich("Started a fresh conversation."), personal=True)


MEMBER_COMMANDS = (
    Command("start", "[CODE]", "Start, or join with an invite code", Access.ANYONE,
            Place.PRIVATE, _start),
    Command("help", "", "What I can do", Access.ANYONE, Place.ANYWHERE, _help),
    Command("link", "[CODE]", "Link this account with another chat app", Access.ANYONE,
            Place.PRIVATE, _link),
    Command("note", "TEXT", "Save a note in your private notes", Access.MEMBER, Place.PRIVATE,
            _note),
    Command("sources", "", "List your private documents", Access.MEMBER, Place.PRIVATE,
            _sources),
    Command("forget", "[HANDLE]", "Delete your private documents (or one, by its handle)",
            Access.MEMBER, Place.PRIVATE, _forget, confirm=_confirm_forget),
    Command("digest", "HH:MM ZONE [quiet] | off | now",
            "A morning digest, e.g. at 07:30 Europe/Berlin", Access.MEMBER, Place.PRIVATE,
            _digest),
    Command("new", "", "Start a fresh conversation (forget this chat's history)",
            Access.MEMBER, Place.ANYWHERE, _new),
)  # fmt: skip
