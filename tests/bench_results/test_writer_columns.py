"""RunWriter's column-wise path: the same rows, rules and refusals as row dicts, a column at a time."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.bench.results import ResultsCatalog, RowError, RunWriter
from omlab.bench.results.columns import _secret_hints, check_columns, is_column_data
from omlab.bench.results.redact import is_secret_key, redact_text

from .samples import NO_PROVENANCE, T0, event_rows

RUN = "20240501T093000-column"


def _table(results_dir, table):
    frame = ResultsCatalog(results_dir).read_table(table)
    return frame.drop(columns=[c for c in ("call_id",) if c in frame.columns]).reset_index(drop=True)


def _columns(rows: list[dict]) -> dict[str, list]:
    names = list(dict.fromkeys(name for row in rows for name in row))
    return {name: [row.get(name) for row in rows] for name in names}


def _as_json_text(rows: list[dict]) -> list[dict]:
    return [{**row, "payload": json.dumps(row["payload"])} for row in rows]


def _write(results_dir, run_id, table, data):
    with RunWriter(results_dir, run_id, provenance=NO_PROVENANCE) as writer:
        getattr(writer, f"add_{table}")(data)


@pytest.mark.parametrize("shape", ["dict of lists", "arrow", "dataframe"])
def test_events_as_columns_equal_events_as_rows(tmp_path, shape):
    rows = _as_json_text(event_rows(40))
    rows[3]["seq"] = 100  # explicit seq in the middle: the ones after it count on from 101
    data = _columns(rows)
    if shape == "arrow":
        data = pa.table({k: pa.array(v) for k, v in data.items()})
    elif shape == "dataframe":
        data = pd.DataFrame(data)
    _write(tmp_path / "rows", "20240501T093000-rowsaa", "events", rows)
    _write(tmp_path / "cols", "20240501T093000-rowsaa", "events", data)
    by_rows, by_columns = _table(tmp_path / "rows", "events"), _table(tmp_path / "cols", "events")
    pd.testing.assert_frame_equal(by_rows, by_columns)
    assert by_columns["seq"].tolist()[:6] == [0, 1, 2, 100, 101, 102]
    assert set(by_columns["kind"]) == {"data", "debug"}


def test_keyed_tables_replace_by_key_from_columns_too(tmp_path):
    with RunWriter(tmp_path, RUN, provenance=NO_PROVENANCE) as writer:
        writer.add_scores({"question_id": ["q1", "q2"], "scorer": ["judge", "judge"], "correct": [True, False]})
        writer.add_scores(pd.DataFrame({"question_id": ["q1"], "scorer": ["judge"], "correct": [False]}))
    scores = _table(tmp_path, "scores").sort_values("question_id")
    assert scores["question_id"].tolist() == ["q1", "q2"]
    assert scores["value"].tolist() == [0.0, 0.0]  # value filled from correct; q1 replaced


def test_model_calls_from_columns_get_call_ids(tmp_path):
    with RunWriter(tmp_path, RUN, provenance=NO_PROVENANCE) as writer:
        writer.add_model_calls(
            {"role": ["observer", "judge"], "requested_model": ["m", "m"], "started_at": [1.7e9, 1.7e9 + 1]}
        )
    calls = ResultsCatalog(tmp_path).read_table("model_calls")
    assert calls["call_id"].str.len().tolist() == [32, 32]
    assert calls["started_at"].tolist() == [
        datetime.fromtimestamp(1.7e9, UTC),
        datetime.fromtimestamp(1.7e9 + 1, UTC),
    ]


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"type": ["a"], "nope": [1]}, "has no column 'nope'"),
        ({"type": ["a", "b"], "tokens_in": [1]}, "same length"),
        ({"type": ["a"], "tokens_in": [1.5]}, "events.tokens_in must be an integer"),
        ({"type": ["a"], "tokens_in": [True]}, "events.tokens_in must be an integer"),
        ({"type": ["a"], "duration_ms": ["slow"]}, "events.duration_ms must be a number"),
        ({"type": ["a"], "ts": [datetime(2024, 1, 1)]}, "timezone-aware"),
        ({"type": [None]}, "missing required column 'type'"),
        ({"type": ["a"], "run_id": ["someone-else"]}, "has run_id 'someone-else'"),
        ({"type": [1]}, "events.type must be a string"),
    ],
)
def test_bad_columns_are_refused_with_table_column_and_row(tmp_path, columns, message):
    with RunWriter(tmp_path, RUN, provenance=NO_PROVENANCE) as writer:
        with pytest.raises(RowError, match=message):
            writer.add_events(columns)
        writer.add_events({"type": ["fine"]})
    assert _table(tmp_path, "events")["type"].tolist() == ["fine"]


def test_invalid_json_text_in_an_arrow_column_names_the_row(tmp_path):
    payload = pa.array(['{"a": 1}', None, "{not json", "[]"])
    with (
        RunWriter(tmp_path, RUN, provenance=NO_PROVENANCE) as writer,
        pytest.raises(RowError, match=r"events.payload row 2 is a string but not valid JSON"),
    ):
        writer.add_events(pa.table({"type": ["t"] * 4, "payload": payload}))


def test_naive_arrow_timestamps_are_refused(tmp_path):
    naive = pa.array([datetime(2024, 1, 1)], type=pa.timestamp("us"))
    with (
        RunWriter(tmp_path, RUN, provenance=NO_PROVENANCE) as writer,
        pytest.raises(RowError, match="events.ts row 0 must be timezone-aware"),
    ):
        writer.add_events(pa.table({"type": ["t"], "ts": naive}))


def test_aware_timestamps_of_any_zone_and_unit_are_stored_in_utc(tmp_path):
    paris = pa.array([datetime(2024, 1, 1, 12, tzinfo=UTC)], type=pa.timestamp("ms", tz="Europe/Paris"))
    with RunWriter(tmp_path, RUN, provenance=NO_PROVENANCE) as writer:
        writer.add_events(pa.table({"type": ["t"], "ts": paris}))
    assert _table(tmp_path, "events")["ts"].tolist() == [pd.Timestamp("2024-01-01 12:00", tz="UTC")]


def test_credentials_in_json_text_and_error_columns_are_removed(tmp_path):
    key = "sk-" + "A1b2C3d4" * 3
    with RunWriter(tmp_path, RUN, provenance=NO_PROVENANCE) as writer:
        writer.add_events(
            pa.table(
                {
                    "type": ["t", "t", "t"],
                    "payload": [json.dumps({"api_key": "x", "n": 1}), json.dumps({"note": key}), '{"tokens": 3}'],
                }
            )
        )
        writer.add_model_calls({"role": ["observer"], "requested_model": ["m"], "error": [f"401 bad key {key}"]})
    payloads = [json.loads(p) for p in _table(tmp_path, "events")["payload"]]
    assert payloads == [{"n": 1}, {"note": "[redacted]"}, {"tokens": 3}]
    assert key not in ResultsCatalog(tmp_path).read_table("model_calls")["error"].iloc[0]


def test_a_unit_with_a_bad_part_keeps_nothing(tmp_path):
    with RunWriter(tmp_path, RUN, provenance=NO_PROVENANCE) as writer, pytest.raises(RowError):
        writer.add_together(
            [("events", pa.table({"type": ["t", "t"]})), ("answers", [{"question_id": "q", "nope": 1}])]
        )
    assert _table(tmp_path, "events").empty


def test_order_of_row_and_column_adds_is_kept(tmp_path):
    with RunWriter(tmp_path, RUN, provenance=NO_PROVENANCE) as writer:
        writer.add_events([{"type": "a"}])
        writer.add_events({"type": ["b", "c"]})
        writer.add_events([{"type": "d"}])
    events = _table(tmp_path, "events")
    assert list(zip(events["seq"], events["type"], strict=True)) == [(0, "a"), (1, "b"), (2, "c"), (3, "d")]


def test_a_single_row_dict_is_still_refused_but_a_dict_of_columns_is_not(tmp_path):
    assert not is_column_data({"type": "a", "seq": 1})
    assert is_column_data({"type": ["a"], "seq": np.array([1])})
    with (
        RunWriter(tmp_path, RUN, provenance=NO_PROVENANCE) as writer,
        pytest.raises(TypeError, match="not a single dict"),
    ):
        writer.add_events({"type": "a", "seq": 1})


def test_check_columns_fills_defaults_and_run_id():
    batch = check_columns("steps", {"conversation_id": ["c"], "step": [3]}, RUN)
    assert batch.column("run_id").to_pylist() == [RUN]
    assert batch.column("observed").to_pylist() == [False]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("aApPiIkKeEyYtToOnNsScCrRhH-_ u"), min_size=1, max_size=14))
def test_the_column_screen_never_misses_a_credential_key(key):
    if is_secret_key(key):
        assert _secret_hints(pa.array([json.dumps({key: 1})])).to_pylist() == [True]


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=40),
        st.builds(lambda body: "sk-" + body, st.text(alphabet="abcXYZ019_-", min_size=16, max_size=30)),
        st.builds(lambda body: "Bearer " + body, st.text(alphabet="abcXYZ019._~+/=-", min_size=12, max_size=30)),
    )
)
def test_the_column_screen_never_misses_a_key_shaped_value(value):
    if redact_text(json.dumps(value)) != json.dumps(value):
        assert _secret_hints(pa.array([json.dumps({"note": value})])).to_pylist() == [True]


def test_unix_seconds_and_iso_text_times_match_the_row_path(tmp_path):
    moments = [T0, T0 + timedelta(seconds=1.5)]
    with RunWriter(tmp_path, RUN, provenance=NO_PROVENANCE) as writer:
        writer.add_events({"type": ["a", "b"], "ts": [m.timestamp() for m in moments]})
        writer.add_events({"type": ["c", "d"], "ts": [m.isoformat() for m in moments]})
    assert _table(tmp_path, "events")["ts"].tolist() == [pd.Timestamp(m) for m in moments * 2]
