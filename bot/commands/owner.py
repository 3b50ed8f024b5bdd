"""Owner commands: invites, spending, approvals, unanswered questions, sharing, watched
sources, and (at this machine's terminal) ingesting local files and folders."""

from __future__ import annotations

from bot.commands.registry import Access, Command, CommandCall, Place
from bot.errors import IngestRefusedError, NotFoundError, UsageError
from bot.ingest_requests import plan_ingest
from bot.knowledge import looks_like_handle
from bot.replies import Message, Reply, Span, bold, italic, link, plain, plain_text, rich
from bot.sources import note, saved_message

__all__ = ["OWNER_COMMANDS"]


async def _ingest(call: CommandCall) -> Reply:
    """Local files, folders or URLs into the caller's private notes (or, with --shared, the
    shared knowledge). In a folder each file's line starts with its place ("3/12"), a file of
    another type is named as skipped, and a refused file is reported and the folder goes on."""
    shared = "--shared" in call.words
    names = [word for word in call.words if word != "--shared"]
    if len(names) != 1:
        raise UsageError(f"Usage: {call.spell('ingest')} [--shared] PATH|URL")
    plan = await plan_ingest(names[0])
    for line in plan.skipped:
        call.report(line)
    saved, skipped, total = 0, plan.left_out, len(plan.sources)
    for number, source in enumerate(plan.sources, start=1):
        step = f"{number}/{total} " if plan.folder else ""
        try:
            result = await call.services.knowledge.ingest(call.identity, source, shared=shared)
        except IngestRefusedError as exc:
            skipped += 1
            call.report(f"{step}Skipped {source.path or source.url}: {exc}")
            continue
        saved += 1
        call.report(step + plain_text(saved_message(result, shared=shared).body))
    return Message(rich(f"Done: {saved} saved, {skipped} skipped."))


async def _invite(call: CommandCall) -> Reply:
    return await call.services.accounts.create_invite(call.identity)


async def _budget(call: CommandCall) -> Reply:
    report = await call.services.reports.budget(call.identity)
    text = f"Today ({report.day}): {report.spent.format(4)} of {report.cap.format(2)} spent."
    if report.pricing_note:
        text += f"\n{report.pricing_note}"
    return Message(rich(text), personal=True)


async def _approvals(call: CommandCall) -> Reply:
    return await call.services.approvals.cards(call.identity, call.spell("approvals"))


async def _decide(call: CommandCall, *, approve: bool) -> Reply:
    """`approve ID` / `reject ID`; without an ID, the one request that is waiting."""
    approvals, words = call.services.approvals, call.words
    verb = "approve" if approve else "reject"
    if not words:
        waiting = await approvals.cards(call.identity, call.spell(verb))
        if len(waiting.cards) != 1:
            if not waiting.cards:
                return waiting
            words = []
        else:
            words = [waiting.cards[0].approval_id]
    if len(words) != 1:
        raise UsageError(
            f"Usage: {call.spell(verb)} ID — several requests are waiting "
            f"(see {call.spell('approvals')})."
        )
    decision = await approvals.decide(call.identity, words[0], approve)
    return Message(rich(decision.answer), personal=True)


async def _approve(call: CommandCall) -> Reply:
    return await _decide(call, approve=True)


async def _reject(call: CommandCall) -> Reply:
    return await _decide(call, approve=False)


async def _unanswered(call: CommandCall) -> Reply:
    questions = await call.services.reports.unanswered(call.identity)
    if not questions:
        return Message(rich("Every question so far found a source."), personal=True)
    body: list[Span] = [bold("Questions without a source")]
    body += [plain(f"\n{q.created_at:%Y-%m-%d %H:%M}  {q.question}") for q in questions]
    return Message(tuple(body), personal=True)


async def _share(call: CommandCall) -> Reply:
    text = call.args.strip()
    if not text:
        raise UsageError(
            f"Usage: {call.spell('share')} HANDLE (a document from {call.spell('sources')}), "
            f"{call.spell('share')} TEXT (a note), or send me a file or link and tap Shared."
        )
    knowledge = call.services.knowledge
    if text.isdigit() and not looks_like_handle(text):
        raise NotFoundError(
            f"Documents are named by their handle now: see {call.spell('sources')}."
        )
    if not looks_like_handle(text):
        return await knowledge.save(call.identity, note(text), shared=True)
    document = await knowledge.document(call.identity, text)
    title = await knowledge.share(call.identity, document.id)
    return Message(
        rich(
            "🌐 Shared: ",
            bold(title),
            " is now in the shared knowledge (your private copy stays).",
        )
    )


async def _watch(call: CommandCall) -> Reply:
    added = await call.services.watching.watch(call.user, call.args.strip())
    source = added.source
    if not added.created:
        return Message(
            rich(f"I already watch that (number {source.id}, see {call.spell('watches')}).")
        )
    what = f"the feed {source.title!r}" if source.title else f"the {source.kind or 'page'}"
    count = f" ({added.entries} entries now)" if added.entries is not None else ""
    return Message(
        rich(
            f"👀 Watching {what}{count}, number {source.id}. What is new goes into the shared "
            "knowledge at the next scan."
        )
    )


async def _watches(call: CommandCall) -> Reply:
    sources = await call.services.watching.watches(call.user)
    if not sources:
        return Message(
            rich(f"I watch nothing yet. Add a feed or page with {call.spell('watch')} URL.")
        )
    body: list[Span] = [bold("Watched sources"), plain(f" ({len(sources)})")]
    for source in sources:
        state = source.last_error or (source.last_status or "not checked yet")
        due = f"{source.next_check_at:%Y-%m-%d %H:%M}"
        body += rich(
            f"\n{source.id}. ",
            link(source.title or source.url, source.url),
            " ",
            italic(f"({source.kind or '?'}; {state}; next {due} UTC)"),
        )
    return Message(tuple(body))


async def _unwatch(call: CommandCall) -> Reply:
    removed = await call.services.watching.unwatch(call.user, call.args.strip())
    if removed is None:
        return Message(rich(f"I don't watch that. {call.spell('watches')} lists what I watch."))
    return Message(
        rich(f"Stopped watching {removed.url}. What it brought stays in the shared knowledge.")
    )


OWNER_COMMANDS = (
    Command("ingest", "[--shared] PATH|URL", "Remember a file, folder or web page",
            Access.OWNER, Place.LOCAL, _ingest),
    Command("invite", "", "Create an invite for a new member", Access.OWNER, Place.PRIVATE,
            _invite),
    Command("budget", "", "Today's spending against the cap", Access.OWNER, Place.PRIVATE,
            _budget),
    Command("approvals", "", "Requests waiting for your decision", Access.OWNER,
            Place.PRIVATE, _approvals),
    Command("approve", "[ID]", "Approve a waiting request", Access.OWNER, Place.PRIVATE,
            _approve, in_menu=False),
    Command("reject", "[ID]", "Reject a waiting request", Access.OWNER, Place.PRIVATE, _reject,
            in_menu=False),
    Command("unanswered", "", "Questions the knowledge could not answer", Access.OWNER,
            Place.PRIVATE, _unanswered),
    Command("share", "HANDLE | TEXT", "Share a document from /sources, or a note",
            Access.OWNER, Place.PRIVATE, _share),
    Command("watch", "URL", "Follow a feed or page for the shared knowledge", Access.OWNER,
            Place.PRIVATE, _watch),
    Command("watches", "", "List the watched feeds and pages", Access.OWNER, Place.PRIVATE,
            _watches),
    Command("unwatch", "URL | NUMBER", "Stop following a feed or page", Access.OWNER,
            Place.PRIVATE, _unwatch),
)  # fmt: skip
