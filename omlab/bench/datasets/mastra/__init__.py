"""Bring your own conversations: import a Mastra storage database (``kind = "mastra"``).

A database written by ``@mastra/libsql`` (a LibSQL/SQLite file) or ``@mastra/pg`` (a
``postgresql://`` URL; ``pip install 'omlab[postgres]'``) is read **read-only**: threads, messages
with every part, resources, and the observational-memory records production wrote.

* :func:`read_mastra` reads a selection (resource, threads, date range) into a
  :class:`MastraImport` with an :class:`ImportSummary` (counts per part type, OM records, ...);
* :func:`load_mastra` turns it into canonical conversations for the suite machinery (one per
  thread, no questions; turns keep their parts);
* :func:`om_records_df` and :func:`markers_df` give what production's OM did as DataFrames.

For calibration code (``omlab calibrate``) the contract is :func:`markers_df`: one row per stored
``data-om-*`` marker with the columns of a run's ``events`` rows of kind ``data``
(``conversation_id`` = thread id, ``ts``, ``type``, ``cycle_id``, ``operation_type``,
``triggered_by``, ``tokens_in``, ``tokens_out``, ``duration_ms``, ``record_id``, ``thread_id``,
``generation``, ``payload``) plus ``message_id``. A buffering-end marker's ``tokens_in`` is the
message tokens it observed and ``tokens_out`` its observation tokens; ``duration_ms`` its time.
:func:`production_frames` opens a database and returns both frames at once.

Every problem (not a Mastra database, a newer schema, a missing table, an unknown or empty thread)
is a :class:`MastraImportError` naming the table or thread, raised before any replay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from omlab.bench.datasets.mastra.conversations import import_conversations, load_mastra
from omlab.bench.datasets.mastra.errors import MastraImportError
from omlab.bench.datasets.mastra.imported import ImportedMessage, ImportedThread
from omlab.bench.datasets.mastra.reader import MastraImport, Selection, read_mastra
from omlab.bench.datasets.mastra.records import engine_options_of, markers_df, om_records_df
from omlab.bench.datasets.mastra.summary import ImportSummary


def production_frames(location: str | Path, **selection: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(om_records_df, markers_df)`` of a Mastra database (``selection``: see :func:`read_mastra`)."""
    imported = read_mastra(location, **selection)
    return om_records_df(imported), markers_df(imported)


__all__ = [
    "ImportSummary",
    "ImportedMessage",
    "ImportedThread",
    "MastraImport",
    "MastraImportError",
    "Selection",
    "engine_options_of",
    "import_conversations",
    "load_mastra",
    "markers_df",
    "om_records_df",
    "production_frames",
    "read_mastra",
]
