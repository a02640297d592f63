"""The one error every dataset loader raises for bad input, and reading a user's file as UTF-8
with an error that names the file and the offending byte."""

from __future__ import annotations

from pathlib import Path


class DatasetError(ValueError):
    """Malformed or unavailable dataset input.

    The message names the file (or URL), the record (index, id or line) and the field, so a user
    can find the problem without a debugger.

    Attributes:
        problem: What is wrong.
        file: The file, URL or hub address, if known.
        record: Which record, e.g. ``"index 3 (question_id 'e47becba')"`` or ``"line 7"``.
        field: The field path inside the record, e.g. ``"haystack_sessions[2][5].role"``.
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        record: str | None = None,
        field: str | None = None,
    ) -> None:
        self.problem = problem
        self.file = file
        self.record = record
        self.field = field
        location = [
            part
            for part in (
                file,
                f"record {record}" if record is not None else None,
                f"field {field!r}" if field is not None else None,
            )
            if part
        ]
        super().__init__(f"{': '.join(location)}: {problem}" if location else problem)


def decode_utf8(data: bytes, file: str, *, first_line: int = 1, offset: int = 0) -> str:
    """``data`` as UTF-8 text, or a :class:`DatasetError` naming ``file``, the first byte that is
    not UTF-8, its offset in the file and its line (``data`` starts at ``offset``, on ``first_line``)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise DatasetError(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {offset + exc.start:,} "
            f"(line {line}, column {column}); save the file as UTF-8",
            file=file,
        ) from None


def read_utf8(path: str | Path) -> str:
    """The text of the file at ``path``, which must be UTF-8 (see :func:`decode_utf8`)."""
    return decode_utf8(Path(path).read_bytes(), str(path))
