"""URL images with no size (issue 20 item 6): priced without the network by default; the opt-in
probe reads the size from the image's first bytes, served here by a local HTTP server."""

from __future__ import annotations

import struct
import threading
import zlib
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from omlab import ObservationalMemory
from omlab.engine.messages import Message, Part


def _png(width: int, height: int) -> bytes:
    """A complete, valid grayscale PNG."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


PHOTO = _png(2048, 1024)


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/photo.png":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(PHOTO)))
        self.end_headers()
        self.wfile.write(PHOTO)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _image_message(url: str) -> Message:
    return Message(
        id="m1",
        role="user",
        parts=[Part(type="image", data=url, mime_type="image/png")],
        created_at=datetime(2025, 3, 3, tzinfo=UTC),
    )


async def _image_tokens(url: str, **engine) -> tuple[int, Part]:
    om = ObservationalMemory({"model": "openai/gpt-4o"}, **engine)
    message = _image_message(url)
    await om.add_messages("t", [message], process=False)
    (part,) = (await om.get_unobserved_messages("t"))[0].parts
    return round(om.counter.count_part(part, model="openai/gpt-4o")), part


async def test_without_the_probe_a_url_image_of_unknown_size_costs_the_base_85(server):
    tokens, part = await _image_tokens(f"{server}/photo.png")
    assert tokens == 85
    assert part.width is None and part.height is None


async def test_the_probe_reads_2048_by_1024_from_the_served_png_and_prices_1105(server):
    tokens, part = await _image_tokens(f"{server}/photo.png", probe_image_urls=True)
    assert (part.width, part.height) == (2048, 1024)  # persisted on the part, as the reference does
    assert tokens == 1105  # 85 + 6 high-detail tiles of 170 (1536x768 after scaling)


async def test_a_failed_probe_leaves_the_part_unsized(server):
    tokens, part = await _image_tokens(f"{server}/missing.png", probe_image_urls=True)
    assert tokens == 85
    assert part.width is None
