"""People on the homeserver, as real nio clients: each syncs in the background, records every
room event it sees (decrypted when the room is encrypted), and can open a direct chat with
the bot, write, send a file and react. `Member.wait_for` awaits what the bot sends; nothing
here sleeps and polls. A person's device lives as long as the test (nio's in-memory store:
no disk, no fsync), while Lore's own device is the real on-disk one."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import nio
from nio.crypto import encrypt_attachment

from tests.matrix.homeserver import Account, Homeserver

__all__ = ["Member", "Said"]

ENCRYPTION = {
    "type": "m.room.encryption",
    "state_key": "",
    "content": {"algorithm": "m.megolm.v1.aes-sha2"},
}
WAIT = 60.0


@dataclass(frozen=True)
class Said:
    """A message as a person reads it: its latest text (after edits) and how many edits."""

    event_id: str
    sender: str
    body: str
    html: str
    edits: int
    content: dict[str, Any]
    reactions: tuple[str, ...]


class Member:
    """One person with a nio client that syncs in the background."""

    def __init__(self, homeserver: Homeserver, account: Account) -> None:
        self.account = account
        self.user_id = account.user_id
        config = nio.AsyncClientConfig(store=nio.store.SqliteMemoryStore, encryption_enabled=True)
        self.client = nio.AsyncClient(homeserver.url, account.user_id, config=config)
        self.events: list[tuple[str, Any]] = []  # (room id, event)
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Member:
        client = self.client
        client.restore_login(
            self.account.user_id, self.account.device_id, self.account.access_token
        )
        client.add_event_callback(self._record, (nio.Event, nio.InviteEvent))
        await client.sync(timeout=0, full_state=True)
        self._task = asyncio.create_task(client.sync_forever(timeout=30_000))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.client.close()

    async def _record(self, room: Any, event: Any) -> None:
        async with self._changed:
            self.events.append((room.room_id, event))
            self._changed.notify_all()

    async def wait_until(self, ready: Callable[[], Any], within: float = WAIT) -> Any:
        """Wait until `ready()` returns something truthy (re-checked on every event)."""
        async with asyncio.timeout(within), self._changed:
            return await self._changed.wait_for(ready)

    async def saw(self, event_id: str) -> None:
        """Wait until this client has received the event `event_id`."""
        await self.wait_until(
            lambda: any(getattr(event, "event_id", None) == event_id for _, event in self.events)
        )

    # -- what the person sees ---------------------------------------------------------------

    def said(self, room_id: str, sender: str) -> list[Said]:
        """`sender`'s messages in a room, each with its latest edit applied, in order."""
        originals: dict[str, dict[str, Any]] = {}
        edits: dict[str, list[dict[str, Any]]] = {}
        reactions: dict[str, list[str]] = {}
        for room, event in self.events:
            if room != room_id or event.sender != sender:
                continue
            content = event.source.get("content", {})
            related = content.get("m.relates_to") or {}
            if isinstance(event, nio.ReactionEvent):
                reactions.setdefault(event.reacts_to, []).append(event.key)
            elif related.get("rel_type") == "m.replace":
                edits.setdefault(related["event_id"], []).append(content["m.new_content"])
            elif isinstance(event, nio.RoomMessage):
                originals[event.event_id] = content
        shown = []
        for event_id, content in originals.items():
            latest = (edits.get(event_id) or [content])[-1]
            shown.append(
                Said(
                    event_id,
                    sender,
                    str(latest.get("body", "")),
                    str(latest.get("formatted_body", "")),
                    len(edits.get(event_id, [])),
                    content,
                    tuple(reactions.get(event_id, [])),
                )
            )
        return shown

    async def reply_from(
        self, room_id: str, sender: str, needle: str, *, count: int = 1, within: float = WAIT
    ) -> Said:
        """The `count`-th message of `sender` in the room whose latest text holds `needle`."""

        def found() -> Said | None:
            matching = [said for said in self.said(room_id, sender) if needle in said.body]
            return matching[count - 1] if len(matching) >= count else None

        result: Said = await self.wait_until(found, within)
        return result

    # -- what the person does ---------------------------------------------------------------

    async def direct_chat(self, other: str, *, encrypted: bool = False) -> str:
        """A new direct chat with `other` (invited); its room id once joined by this client."""
        response = await self.client.room_create(
            is_direct=True,
            invite=[other],
            preset=nio.RoomPreset.trusted_private_chat,
            initial_state=[ENCRYPTION] if encrypted else [],
        )
        assert isinstance(response, nio.RoomCreateResponse), response
        room_id = str(response.room_id)
        # As a client would, write only once the invite is known: the invited devices then
        # get the room key of the first message.
        await self.wait_until(
            lambda: room_id in self.client.rooms and other in self.client.rooms[room_id].users
        )
        return room_id

    async def room(self, *invited: str, name: str = "Team") -> str:
        """A new group room with `invited` people in it (invited)."""
        response = await self.client.room_create(name=name, invite=list(invited))
        assert isinstance(response, nio.RoomCreateResponse), response
        room_id = str(response.room_id)
        await self.wait_until(lambda: room_id in self.client.rooms)
        return room_id

    async def joined(self, room_id: str, user_id: str) -> None:
        """Wait until `user_id` has joined the room."""
        await self.wait_until(
            lambda: (
                room_id in self.client.rooms
                and user_id in self.client.rooms[room_id].users
                and user_id not in self.client.rooms[room_id].invited_users
            )
        )

    async def join(self, room_id: str) -> None:
        response = await self.client.join(room_id)
        assert isinstance(response, nio.JoinResponse), response
        await self.wait_until(lambda: room_id in self.client.rooms)

    async def send(self, room_id: str, content: dict[str, Any]) -> str:
        response = await self.client.room_send(
            room_id, "m.room.message", content, ignore_unverified_devices=True
        )
        assert isinstance(response, nio.RoomSendResponse), response
        return str(response.event_id)

    async def say(self, room_id: str, text: str, **extra: Any) -> str:
        """Write `text` in the room (with `extra` content: mentions, relations)."""
        return await self.send(room_id, {"msgtype": "m.text", "body": text, **extra})

    async def withhold_keys_from(self, room_id: str, user_id: str) -> None:
        """From now on share no room key with `user_id`'s devices, as a client that sends
        keys to verified devices only does with a device nobody verified (Lore's)."""
        client = self.client
        if not client.rooms[room_id].members_synced:
            await client.joined_members(room_id)
        if client.should_query_keys:
            await client.keys_query()
        devices = list(client.device_store.active_user_devices(user_id))
        assert devices, f"{user_id} has no device this client knows of"
        for device in devices:
            client.blacklist_device(device)

    async def react(self, room_id: str, event_id: str, key: str) -> str:
        content = {"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}}
        response = await self.client.room_send(
            room_id, "m.reaction", content, ignore_unverified_devices=True
        )
        assert isinstance(response, nio.RoomSendResponse), response
        return str(response.event_id)

    async def send_file(
        self,
        room_id: str,
        name: str,
        data: bytes,
        *,
        msgtype: str = "m.file",
        mimetype: str = "text/plain",
        info: dict[str, Any] | None = None,
        **extra: Any,
    ) -> str:
        """Upload a file (encrypted in an encrypted room) and send it as a message; `info`
        adds to what the message announces (a duration), `extra` to its content (a voice
        message's marker, a reply)."""
        encrypted = self.client.rooms[room_id].encrypted
        payload, keys = encrypt_attachment(data) if encrypted else (data, None)
        response, _ = await self.client.upload(
            io.BytesIO(payload),
            content_type="application/octet-stream" if encrypted else mimetype,
            filename=name,
            filesize=len(payload),
        )
        assert isinstance(response, nio.UploadResponse), response
        content: dict[str, Any] = {
            "msgtype": msgtype,
            "body": name,
            "info": {"size": len(data), "mimetype": mimetype, **(info or {})},
            **extra,
        }
        if keys is not None:
            content["file"] = {"url": response.content_uri, "mimetype": mimetype, "v": "v2", **keys}
        else:
            content["url"] = response.content_uri
        return await self.send(room_id, content)
