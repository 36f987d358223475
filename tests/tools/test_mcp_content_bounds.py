"""The bounds of MCP content conversion: image caps and types, dimensions, resource text, audio."""

from __future__ import annotations

import base64
import struct
import zlib

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from ollie_nb.llm import ImagePart
from ollie_nb.tools import _content
from ollie_nb.tools._content import MAX_IMAGE_BYTES, MAX_IMAGES, MAX_RESOURCE_TEXT, tool_result


def _png(width: int, height: int, pad: int = 0) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = (
        struct.pack(">I", len(ihdr))
        + b"IHDR"
        + ihdr
        + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    )
    return b"\x89PNG\r\n\x1a\n" + chunk + b"\0" * pad


def _jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\1\1\0\0\1\0\1\0\0"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\1\x11\0"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def _image(raw: bytes, mime: str = "image/png") -> ImageContent:
    return ImageContent(data=base64.b64encode(raw).decode(), mime_type=mime)


def _result(*content) -> CallToolResult:
    return CallToolResult(content=list(content))


def test_dimensions_of_png_gif_and_jpeg_and_none_for_others():
    assert _content.image_dimensions(_png(640, 480)) == (640, 480)
    assert _content.image_dimensions(b"GIF89a" + struct.pack("<HH", 33, 7) + b"\0" * 6) == (33, 7)
    assert _content.image_dimensions(_jpeg(1024, 768)) == (1024, 768)
    assert _content.image_dimensions(b"RIFF....WEBPVP8 ") is None
    assert _content.image_dimensions(b"\x89PNG\r\n\x1a\n\0\0") is None  # cut short


def test_an_image_over_the_byte_cap_is_described_not_sent():
    fits = _png(2, 2, pad=MAX_IMAGE_BYTES - len(_png(2, 2)))
    assert len(fits) == MAX_IMAGE_BYTES
    sent = tool_result(_result(_image(fits)))
    assert sent.images == (ImagePart("image/png", base64.b64encode(fits).decode()),)
    assert sent.text == f"[image 1: image/png, {MAX_IMAGE_BYTES} bytes, 2x2 pixels]"
    over = tool_result(_result(_image(fits + b"\0")))
    assert over.images == ()
    assert over.text == (
        f"[image: image/png, {MAX_IMAGE_BYTES + 1} bytes, 2x2 pixels; "
        f"not shown: over the {MAX_IMAGE_BYTES}-byte cap]"
    )


def test_at_most_max_images_are_sent_the_rest_described():
    images = [_image(_png(i + 1, 1)) for i in range(MAX_IMAGES + 1)]
    result = tool_result(_result(*images))
    assert len(result.images) == MAX_IMAGES
    lines = result.text.splitlines()
    assert lines[0] == "[image 1: image/png, 33 bytes, 1x1 pixels]"
    assert lines[-1] == (
        f"[image: image/png, 33 bytes, {MAX_IMAGES + 1}x1 pixels; "
        f"not shown: over {MAX_IMAGES} images in one result]"
    )


def test_unsent_types_bad_base64_audio_and_blobs_are_described():
    svg = ImageContent(data=base64.b64encode(b"<svg/>").decode(), mime_type="image/svg+xml")
    bad = ImageContent(data="not base64!", mime_type="image/png")
    audio = AudioContent(data=base64.b64encode(b"\0" * 10).decode(), mime_type="audio/wav")
    blob = EmbeddedResource(
        resource=BlobResourceContents(uri="file:///x.gz", mime_type="application/gzip", blob="AAAA")
    )
    result = tool_result(_result(svg, bad, audio, blob))
    assert result.images == ()
    assert result.text.splitlines() == [
        "[image: image/svg+xml, 6 bytes; not shown: the type is not one models take]",
        "[image: image/png, data that is not valid base64; not shown]",
        "[audio: audio/wav, 10 bytes; not shown]",
        "[resource file:///x.gz (application/gzip): 3 bytes of binary data, not shown]",
    ]


def test_embedded_text_is_capped_and_errors_keep_their_flag():
    long = "a" * (MAX_RESOURCE_TEXT + 10)
    embedded = EmbeddedResource(resource=TextResourceContents(uri="mem://long", text=long))
    result = tool_result(
        CallToolResult(content=[TextContent(text="head"), embedded], is_error=True)
    )
    head, marker, *_ = result.text.split("\n")
    assert (head, marker) == ("head", "[resource mem://long]")
    assert "[... 10 characters cut of 50010 ...]" in result.text
    assert len(result.text) < MAX_RESOURCE_TEXT + 100 and result.is_error
