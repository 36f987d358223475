"""MCP tool content as the model gets it: text for every item, and the images themselves.

Text items pass as they are. An embedded text resource gives its text under its URI and
MIME type; a binary one, a resource link, an image or audio is described in one bracketed
line (URI, name, type, size, an image's dimensions). Images of a type the providers take,
and within the caps, also travel as `ImagePart`s for the backends that send images.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from collections.abc import Callable
from typing import Any

from ollie_nb.llm._types import ImagePart
from ollie_nb.tools._bounds import cap_parts, cap_text
from ollie_nb.tools._types import ToolResult

MAX_IMAGE_BYTES = 1_000_000
"""Decoded bytes of one image sent to the model; larger ones are described only.

Every later request carries the image again; Anthropic refuses images over 5 MB.
"""
MAX_IMAGES = 4  # images of one result sent; the others are described only
MAX_RESOURCE_TEXT = 50_000  # characters of one embedded resource's text (head and tail)
SENT_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_HEADER_CHARS = 87_380  # base64 characters (65,535 bytes) read for an image's dimensions


def tool_result(result: Any, cap: int = 0) -> ToolResult:
    """A CallToolResult as text (every item) plus the images that may be sent; at most
    `cap` characters of the items' texts are joined (head and tail, as the dispatcher keeps;
    0: all)."""
    parts: list[str] = []
    images: list[ImagePart] = []
    for item in result.content or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind == "image":
            parts.append(_image(item, images))
        elif kind == "resource":
            parts.append(_embedded(item.resource))
        elif kind == "resource_link":
            parts.append(_link(item))
        elif kind == "audio":
            parts.append(f"[audio: {item.mime_type}, {_size(item.data)}; not shown]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False))
    text = cap_parts(parts, cap)
    return ToolResult(text, is_error=bool(result.is_error), images=tuple(images))


def _image(item: Any, images: list[ImagePart]) -> str:
    """The line describing an image; the image joins `images` when it may be sent."""
    mime = item.mime_type or "unknown type"
    sendable = mime in SENT_IMAGE_TYPES and decoded_size(item.data) <= MAX_IMAGE_BYTES
    try:  # a picture that is sent is checked whole: a provider refuses the request otherwise
        raw = base64.b64decode(item.data if sendable else item.data[:_HEADER_CHARS], validate=True)
    except (binascii.Error, ValueError):
        return f"[image: {mime}, data that is not valid base64; not shown]"
    facts = [mime, _size(item.data)]
    dims = image_dimensions(raw)
    if dims:
        facts.append(f"{dims[0]}x{dims[1]} pixels")
    if mime not in SENT_IMAGE_TYPES:
        return f"[image: {', '.join(facts)}; not shown: the type is not one models take]"
    if decoded_size(item.data) > MAX_IMAGE_BYTES:
        return f"[image: {', '.join(facts)}; not shown: over the {MAX_IMAGE_BYTES}-byte cap]"
    if len(images) >= MAX_IMAGES:
        return f"[image: {', '.join(facts)}; not shown: over {MAX_IMAGES} images in one result]"
    images.append(ImagePart(mime, item.data))
    return f"[image {len(images)}: {', '.join(facts)}]"


def _embedded(resource: Any) -> str:
    """An embedded resource: its text under a header line, or a description of its blob."""
    where = resource.uri + (f" ({resource.mime_type})" if resource.mime_type else "")
    text = getattr(resource, "text", None)
    if text is not None:
        return f"[resource {where}]\n{cap_text(text, MAX_RESOURCE_TEXT)}"
    return f"[resource {where}: {_size(resource.blob)} of binary data, not shown]"


def _link(link: Any) -> str:
    """A resource link: name (and title), URI, type and size, description."""
    name = link.name + (f" ({link.title})" if link.title and link.title != link.name else "")
    facts = [fact for fact in (link.mime_type, _bytes(link.size)) if fact]
    line = f"[resource link: {name} <{link.uri}>"
    if facts:
        line += f" ({', '.join(facts)})"
    if link.description:
        line += f": {link.description}"
    return line + "]"


def decoded_size(data: str) -> int:
    """The byte count of base64 `data` once decoded (without decoding it)."""
    data = data.rstrip()
    return max(0, len(data) * 3 // 4 - (len(data) - len(data.rstrip("="))))


def _size(data: str) -> str:
    return _bytes(decoded_size(data))


def _bytes(count: int | None) -> str:
    return "" if count is None else f"{count} bytes"


def image_dimensions(head: bytes) -> tuple[int, int] | None:
    """(width, height) read from the first bytes of a PNG, GIF or JPEG file, else None."""
    for magic, reader in _READERS:
        if head.startswith(magic):
            try:
                return reader(head)
            except struct.error:
                return None
    return None


def _png(head: bytes) -> tuple[int, int]:
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _gif(head: bytes) -> tuple[int, int]:
    width, height = struct.unpack("<HH", head[6:10])
    return width, height


def _jpeg(head: bytes) -> tuple[int, int] | None:
    """Walk the segments to the first start-of-frame marker, which holds the size."""
    at = 2
    while at + 9 <= len(head) and head[at] == 0xFF:
        marker = head[at + 1]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", head[at + 5 : at + 9])
            return width, height
        at += 2 + struct.unpack(">H", head[at + 2 : at + 4])[0]
    return None


_READERS: tuple[tuple[bytes, Callable[[bytes], tuple[int, int] | None]], ...] = (
    (b"\x89PNG\r\n\x1a\n", _png),
    (b"GIF87a", _gif),
    (b"GIF89a", _gif),
    (b"\xff\xd8", _jpeg),
)
