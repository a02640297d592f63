"""The one error every dataset loader raises for bad input."""

from __future__ import annotations


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
