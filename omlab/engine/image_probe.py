"""Opt-in probe of a URL image's size, the reference's ``probe-image-size`` step.

Token counting never touches the network: an image given only by an ``http(s)`` URL, with no
``width``/``height``, is priced as an image of unknown size (85 tokens for an OpenAI model,
docs/divergences.md). ``ObservationalMemory(..., probe_image_urls=True)`` runs this probe on
every added message first: the first 64 KB of each such image are fetched (2.5 s timeout, as
the reference) and the size read from its header (PNG, JPEG, GIF, WebP) is written onto the
part, as the reference persists probed dimensions. A failed or unreadable fetch leaves the part
as it was.
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from collections.abc import Iterable

from omlab.engine.attachment_tokens import image_dimensions, is_image_part, read_image_size
from omlab.engine.messages import Message, Part

PROBE_TIMEOUT_S = 2.5
"""The reference's probe timeout."""

PROBE_BYTES = 64 * 1024
"""Bytes fetched per image: enough for any header the size reader knows."""


def _needs_probe(part: Part) -> bool:
    if not is_image_part(part) or not isinstance(part.data, str):
        return False
    if not part.data.lower().startswith(("http://", "https://")):
        return False
    width, height = image_dimensions(part)
    return not (width and height)


def fetch_head(url: str, *, timeout_s: float = PROBE_TIMEOUT_S, max_bytes: int = PROBE_BYTES) -> bytes | None:
    """The first ``max_bytes`` of ``url`` (a ``Range`` request; a server that ignores it is read
    only that far), or None when the fetch fails or ``url`` is not http(s)."""
    if not url.lower().startswith(("http://", "https://")):
        return None  # never a file: or other scheme urllib would open
    request = urllib.request.Request(url, headers={"Range": f"bytes=0-{max_bytes - 1}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return response.read(max_bytes)
    except (urllib.error.URLError, OSError, ValueError):
        return None


async def probe_image_dimensions(messages: Iterable[Message], *, timeout_s: float = PROBE_TIMEOUT_S) -> int:
    """Set ``width``/``height`` on every URL image part of ``messages`` whose size is unknown and
    whose header can be fetched and read; returns how many parts were sized."""
    sized = 0
    for message in messages:
        for part in message.parts:
            if not _needs_probe(part):
                continue
            head = await asyncio.to_thread(fetch_head, part.data, timeout_s=timeout_s)
            size = read_image_size(head) if head else None
            if size is not None:
                part.width, part.height = size
                sized += 1
    return sized
