"""The statements that take back one conversation phase before it is redone."""

from __future__ import annotations

import duckdb
import pytest

from omlab.bench.results.discard import discard_statements
from omlab.bench.results.schema import MODEL_ROLES_BY_PHASE, PHASES, ddl


def test_an_unknown_phase_is_named():
    with pytest.raises(ValueError, match="'answers'"):
        discard_statements("c1", "answers")


@pytest.mark.parametrize("phase", PHASES)
def test_each_phase_deletes_only_its_own_rows_of_its_own_conversation(phase):
    connection = duckdb.connect()
    for statement in ddl():
        connection.execute(statement)
    tables = {name for (name,) in connection.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    statements, touched = discard_statements("c1", phase)
    assert set(touched) <= tables
    assert {"model_calls", "call_texts", "conversations"} <= set(touched)
    for sql, parameters in statements:
        connection.execute(sql, parameters)  # every statement is valid against the schema
        assert parameters[0] == "c1"
    roles_deleted = {p for sql, parameters in statements if "role IN" in sql for p in parameters[1:]}
    assert roles_deleted == set(MODEL_ROLES_BY_PHASE[phase])
    # call texts go before the calls they belong to are deleted (the subquery reads model_calls)
    order = [sql.split()[2] for sql, _ in statements]
    assert order.index("call_texts") < order.index("model_calls")
