"""The recorder run again, by Mastra's own storage code, gives the database the tests read; and
the same threads written by ``@mastra/pg`` into a real PostgreSQL server import identically.

Slow: the recorder installs Node 22 and ``@mastra/*`` from the npm registry once (into
``~/.cache/omlab/mastra-recorder``) and replays 300 messages per database.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from imports_equal import import_view
from postgres_server import CannotStart, start_postgres

from omlab.bench.datasets.mastra import read_mastra

REPO = Path(__file__).resolve().parents[2]
RECORDER = REPO / "scripts" / "record_mastra_db.sh"

pytestmark = pytest.mark.slow


def _record(target: str, tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.fail("npm is needed to record with Mastra's storage code (scripts/test.sh installs it)")
    done = subprocess.run(["bash", str(RECORDER), target], capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


def test_recording_again_writes_the_same_database(recorded, tmp_path):
    fresh = tmp_path / "fresh.db"
    _record(str(fresh), tmp_path)
    assert import_view(read_mastra(fresh)) == import_view(read_mastra(recorded))


@pytest.fixture(scope="module")
def postgres():
    try:
        server = start_postgres()
    except CannotStart as error:
        pytest.skip(f"PostgreSQL cannot start here: {error}")
    yield server
    server.stop()


def test_a_database_written_by_mastra_pg_imports_like_the_libsql_one(postgres, recorded, tmp_path):
    """Everything but the OM markers is identical: threads, messages, content parts, OM records.
    The engine persists the markers of background operations concurrently with the turn, and with
    PostgreSQL's round trips they land on other messages, or their counts vary from one recording
    to the next (seen: a buffering-start a message apart; totals per type off by a few), so the
    markers are checked against the database itself: every stored part is counted."""
    import psycopg

    _record(postgres.url, tmp_path)
    from_pg = read_mastra(postgres.url)
    assert from_pg.dialect == "postgres" and from_pg.summary.messages == 300
    assert import_view(from_pg, markers=False) == import_view(read_mastra(recorded), markers=False)
    with psycopg.connect(postgres.url) as connection:
        direct = dict(
            connection.execute(
                "SELECT p->>'type', count(*) FROM mastra_messages m, "
                "jsonb_array_elements(m.content::jsonb->'parts') p GROUP BY 1"
            ).fetchall()
        )
    assert from_pg.summary.parts_by_type == direct


def test_postgres_reads_are_read_only(postgres):
    import psycopg

    from omlab.bench.datasets.mastra.source import open_source

    source = open_source(postgres.url)
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        source.query("CREATE TABLE intruder (id int)")
    source.close()
