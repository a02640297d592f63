"""run_lineage reads only what the lineage needs of a run: the result is the one the full tables give."""

from __future__ import annotations

import pandas as pd
import pytest
from bench_runner.suites import offline_synthetic_suite

from omlab.bench.lineage import lineage_frames, read_inputs, run_lineage
from omlab.bench.results import ResultsCatalog, answers_df, conversations_df, events_df, steps_df
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite
from omlab.bench.suite.dataset import load_conversations
from omlab.bench.suite.suite_file import load_suite

SUITE = offline_synthetic_suite(
    "buffered",
    engine="observation = { messageTokens = 1500, bufferTokens = 0.2, bufferActivation = 0.8, blockAfter = 1.2 }\n"
    "reflection = { observationTokens = 600 }",
)


@pytest.fixture(scope="module")
def buffered_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lineage-reads")
    path = folder / "buffered.toml"
    path.write_text(SUITE, encoding="utf-8")
    [summary] = run_suite(path, RunOptions(results_dir=folder / "results", progress=False))
    suite = load_suite(path)
    _, conversations = load_conversations(suite.dataset, suite.base_dir)
    return ResultsCatalog(folder / "results"), summary.run_id, conversations


def test_the_lineage_from_the_columns_it_reads_is_the_lineage_from_the_whole_tables(buffered_run):
    catalog, run_id, conversations = buffered_run
    prepared = conversations_df(catalog, run_id, phase="prepare")
    tokens = dict(zip(prepared["conversation_id"], prepared["n_message_tokens"].astype(int), strict=True))
    events = events_df(catalog, run_id)
    assert {"data-om-buffering-end", "data-om-activation", "step_progress"} <= set(events["type"])
    assert (events["operation_type"] == "reflection").any()
    whole = lineage_frames(
        conversations, steps_df(catalog, run_id), events, answers_df(catalog, run_id), n_message_tokens=tokens
    )
    pruned = run_lineage(catalog, run_id, conversations)
    assert set(whole[0]["fate"]) >= {"dropped", "merged", "unobserved"}
    pd.testing.assert_frame_equal(pruned[0], whole[0])
    pd.testing.assert_frame_equal(pruned[1], whole[1])


def test_the_inputs_hold_no_status_payload_and_every_logged_part(buffered_run):
    catalog, run_id, _ = buffered_run
    inputs = read_inputs(catalog, run_id)
    events = events_df(catalog, run_id, types=["data-om-status"])
    status = inputs.events[inputs.events["type"] == "data-om-status"]
    assert status["seq"].tolist() == events["seq"].tolist()
    assert status["payload"].isna().all()
    logged = inputs.events[inputs.events["type"] != "data-om-status"]
    assert logged["payload"].notna().all()
    assert not ((logged["type"] == "data-om-buffering-end") & (logged["operation_type"] == "reflection")).any()
    assert inputs.events["seq"].is_monotonic_increasing
    assert list(inputs.steps.columns) == ["conversation_id", "step", "ts", "message_id"]
    assert len(inputs.steps) == len(steps_df(catalog, run_id))


def test_the_table_the_runner_wrote_while_the_run_was_live_is_the_one_read_after(buffered_run):
    catalog, run_id, conversations = buffered_run
    stored = catalog.read_table("lineage", run_id)
    evidence, _ = run_lineage(catalog, run_id, conversations)
    key = ["question_id", "evidence_id"]
    stored = stored.sort_values(key, ignore_index=True)
    evidence = evidence.sort_values(key, ignore_index=True)
    for column in ("fate", "lines", "generations", "final_lines", "cycle_id"):
        assert stored[column].tolist() == evidence[column].tolist(), column
    for column in ("ingest_step", "observed_step", "dropped_generation", "dropped_step"):
        assert stored[column].astype("Int64").tolist() == evidence[column].astype("Int64").tolist(), column
