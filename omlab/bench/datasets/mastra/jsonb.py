"""SQLite's binary JSON (JSONB, SQLite 3.45+) decoded in Python.

``@mastra/libsql`` stores some JSON columns (a thread's ``metadata``) with ``jsonb(?)``. Python's
bundled SQLite can be older than 3.45 and cannot turn those blobs back into text, so omlab reads
the format itself (https://sqlite.org/jsonb.html): a header byte whose low four bits are the element
type and whose high four bits are the payload size (12-15: the size follows in 1, 2, 4 or 8
big-endian bytes), then the payload.
"""

from __future__ import annotations

import json
from typing import Any

_NULL, _TRUE, _FALSE, _INT, _INT5, _FLOAT, _FLOAT5, _TEXT, _TEXTJ, _TEXT5, _TEXTRAW, _ARRAY, _OBJECT = range(13)


class JsonbError(ValueError):
    """A blob that is not well-formed SQLite JSONB."""


def decode_jsonb(blob: bytes) -> Any:
    """The JSON value stored in ``blob``.

    Raises:
        JsonbError: a truncated blob, a reserved element type or trailing bytes.
    """
    value, end = _element(memoryview(blob), 0)
    if end != len(blob):
        raise JsonbError(f"{len(blob) - end} trailing bytes after the JSONB value")
    return value


def _element(data: memoryview, at: int) -> tuple[Any, int]:
    if at >= len(data):
        raise JsonbError("truncated JSONB")
    head = data[at]
    kind, size_code = head & 0x0F, head >> 4
    start = at + 1
    if size_code <= 11:
        size = size_code
    else:
        width = {12: 1, 13: 2, 14: 4, 15: 8}[size_code]
        size = int.from_bytes(data[start : start + width], "big")
        start += width
    end = start + size
    if end > len(data):
        raise JsonbError("truncated JSONB")
    payload = bytes(data[start:end])
    if kind == _NULL:
        return None, end
    if kind == _TRUE:
        return True, end
    if kind == _FALSE:
        return False, end
    if kind in (_INT, _INT5):
        return int(payload.decode("ascii"), 0), end
    if kind in (_FLOAT, _FLOAT5):
        return float(payload.decode("ascii")), end
    if kind in (_TEXT, _TEXTRAW):
        return payload.decode("utf-8"), end
    if kind in (_TEXTJ, _TEXT5):
        return json.loads(f'"{payload.decode("utf-8")}"'), end
    if kind == _ARRAY:
        items, cursor = [], start
        while cursor < end:
            item, cursor = _element(data, cursor)
            items.append(item)
        return items, end
    if kind == _OBJECT:
        members, cursor = {}, start
        while cursor < end:
            key, cursor = _element(data, cursor)
            value, cursor = _element(data, cursor)
            members[str(key)] = value
        return members, end
    raise JsonbError(f"reserved JSONB element type {kind}")
