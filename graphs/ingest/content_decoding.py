"""Undo an HTTP body's Content-Encoding layers (gzip, deflate, nested) with a hard output cap.

httpx decodes a compressed body without any output limit, so a 1.8 KB body sent as
`Content-Encoding: gzip, gzip` grows to gigabytes before a size check sees it. A
`BoundedDecoder` is fed the raw bytes as they arrive and passes them through one
`zlib` decompressor per layer, asking each for at most `_STEP` bytes at a time
(`max_length`) and pulling from the innermost layer first, so no layer holds more than
a step or two of data between reads. Every layer's total output counts against `cap`;
the first byte over it raises `DecodedTooLargeError`. Peak memory is therefore the cap
(the decoded body itself) plus a few steps per layer, whatever the body.

Supported: `identity`, `gzip`/`x-gzip` (several members in a row too) and `deflate`
(zlib-wrapped, or raw as some servers send it), nested up to `_MAX_LAYERS` deep.
Anything else (`br`, `zstd`, `compress`) raises `UnsupportedEncodingError`: Lore
asks only for gzip and deflate, so a server that sends something else is refused.
"""

from __future__ import annotations

import zlib
from typing import Final

__all__ = [
    "BoundedDecoder",
    "ContentDecodingError",
    "DecodedTooLargeError",
    "UnsupportedEncodingError",
]

_STEP: Final = 64 * 1024
_MAX_LAYERS: Final = 4
_GZIP_WBITS: Final = 16 + zlib.MAX_WBITS
_IDENTITY: Final = frozenset({"", "identity"})
_GZIP_MAGIC: Final = b"\x1f\x8b"


class ContentDecodingError(Exception):
    """The body cannot be decoded: corrupt data, or an encoding Lore does not accept."""


class UnsupportedEncodingError(ContentDecodingError):
    """A Content-Encoding other than gzip or deflate, or too many layers of them."""


class DecodedTooLargeError(ContentDecodingError):
    """The decoded body (or an intermediate layer of it) exceeds the cap."""


class _Layer:
    """One decompressor: gzip (several members in a row allowed) or deflate (zlib or raw).

    Bytes after the end of the last stream (padding some servers add) are ignored.
    """

    def __init__(self, encoding: str) -> None:
        self._gzip = encoding in {"gzip", "x-gzip"}
        self._inflate: zlib._Decompress | None = (
            zlib.decompressobj(_GZIP_WBITS) if self._gzip else None
        )
        self._pending = b""  # compressed input this layer has not consumed yet
        self._seen_input = False
        self._ended = False

    def take(self, data: bytes) -> None:
        """Queue compressed input; `step` consumes it."""
        self._seen_input = self._seen_input or bool(data)
        if not self._ended:
            self._pending += data

    def step(self) -> bytes:
        """Up to `_STEP` decoded bytes from the queued input (b"" when it needs more input)."""
        while self._pending:
            inflate = self._inflate or self._start_deflate()
            if inflate.eof:
                if not (self._gzip and self._pending.startswith(_GZIP_MAGIC)):
                    self._pending, self._ended = b"", True
                    return b""
                self._inflate = inflate = zlib.decompressobj(_GZIP_WBITS)  # the next member
            try:
                out = inflate.decompress(self._pending, _STEP)
            except zlib.error as exc:
                raise ContentDecodingError(str(exc)) from exc
            self._pending = inflate.unused_data if inflate.eof else inflate.unconsumed_tail
            if out:
                return out
            if not inflate.eof:
                return b""  # all input consumed, nothing out yet
        return b""

    def finish(self) -> None:
        """Check that the stream ended where the body did (an empty body is fine)."""
        if self._seen_input and (self._inflate is None or not self._inflate.eof):
            raise ContentDecodingError("the compressed body ended early")

    def _start_deflate(self) -> zlib._Decompress:
        """Deflate should be zlib-wrapped, but some servers send it raw: tell by the header."""
        if len(self._pending) < 2:
            raise _NeedMoreInputError
        cmf, flags = self._pending[0], self._pending[1]
        wrapped = cmf & 0x0F == 8 and (cmf << 8 | flags) % 31 == 0
        self._inflate = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        return self._inflate


class _NeedMoreInputError(Exception):
    """A deflate layer has not seen its two header bytes yet."""


class BoundedDecoder:
    """Decodes a body's Content-Encoding layers as it streams in, never past `cap` bytes.

    `feed()` each raw chunk, then `close()`; both return the decoded bytes they produced.
    """

    def __init__(self, content_encoding: str | None, cap: int) -> None:
        names = [name.strip().lower() for name in (content_encoding or "").split(",")]
        names = [name for name in names if name not in _IDENTITY]
        for name in names:
            if name not in {"gzip", "x-gzip", "deflate"}:
                raise UnsupportedEncodingError(f"unsupported content encoding {name!r}")
        if len(names) > _MAX_LAYERS:
            raise UnsupportedEncodingError(f"{len(names)} layers of content encoding")
        # Encodings are listed in the order they were applied: undo the last one first.
        self._layers = [_Layer(name) for name in reversed(names)]
        self._produced = [0] * len(self._layers)
        self._cap = cap
        self._total = 0

    def feed(self, chunk: bytes) -> bytes:
        """Decode one raw chunk; raise `DecodedTooLargeError` past the cap."""
        if not self._layers:
            return self._count(chunk)
        self._layers[0].take(chunk)
        return self._drain()

    def close(self) -> bytes:
        """Decode what is left and check every layer ended cleanly."""
        out = self._drain() if self._layers else b""
        for layer in self._layers:
            layer.finish()
        return out

    def _drain(self) -> bytes:
        """Pull decoded steps out of the last layer until every layer needs more raw input."""
        out = bytearray()
        last = len(self._layers) - 1
        while piece := self._pull(last):
            out += self._count(piece)
        return bytes(out)

    def _pull(self, index: int) -> bytes:
        """One step of layer `index`'s output, asking the layer before it only when it is dry.

        Pulling from the end keeps at most a step or two queued in each layer, so a bomb in
        an inner layer never piles up in memory between layers.
        """
        layer = self._layers[index]
        while True:
            try:
                piece = layer.step()
            except _NeedMoreInputError:
                piece = b""
            if piece:
                self._produced[index] += len(piece)
                if self._produced[index] > self._cap:
                    raise DecodedTooLargeError("the decoded body exceeds the cap")
                return piece
            if index == 0:
                return b""
            upstream = self._pull(index - 1)
            if not upstream:
                return b""
            layer.take(upstream)

    def _count(self, piece: bytes) -> bytes:
        self._total += len(piece)
        if self._total > self._cap:
            raise DecodedTooLargeError("the decoded body exceeds the cap")
        return piece
