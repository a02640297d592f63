"""The error every Mastra import problem raises, naming the database, table and thread."""

from __future__ import annotations

from omlab.bench.datasets.errors import DatasetError


class MastraImportError(DatasetError):
    """A Mastra database omlab cannot import as asked, raised before any replay.

    The message reads ``<database>: table <t>: thread '<id>': message '<id>': column <c>: problem``
    with the parts that are known.

    Attributes:
        table: The table, if the problem is one table's.
        thread: The thread id, if the problem is one thread's.
        message: The message id, if the problem is one message's.
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        table: str | None = None,
        thread: str | None = None,
        message: str | None = None,
        column: str | None = None,
    ) -> None:
        super().__init__(problem, file=file, field=column)
        self.table, self.thread, self.message = table, thread, message
        where = [
            part
            for part in (
                file,
                f"table {table}" if table else None,
                f"thread {thread!r}" if thread is not None else None,
                f"message {message!r}" if message is not None else None,
                f"column {column}" if column else None,
            )
            if part
        ]
        self.args = (": ".join([*where, problem]),)

    def __str__(self) -> str:
        return str(self.args[0])
