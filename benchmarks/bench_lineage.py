"""Cost of the evidence lineage next to the run it explains (issue 12: lineage < 10% of the replay).

Run: ``.venv/bin/python benchmarks/bench_lineage.py [--tokens 1000000] [--conversations 1]
[--questions 30] [--message-tokens 30000] [--observation-tokens 40000] [--repeat 3]``.

Runs the prepare (replay through the engine) and answer phases of ``--conversations`` synthetic
conversations totalling ``--tokens`` tokens, offline models, response cache off, in a temporary
results directory, with one worker. The replay and answer times are the run's own per-phase
records (``conversations.started_at``/``finished_at``, summed over conversations). Then
``run_lineage`` (what the runner calls when a run finishes) is timed on the finished run,
``--repeat`` times: the first call starts with an empty word cache, as in a fresh run; the later
ones reuse it. The last call is split in two: reading what it needs of the run's tables
(``read_inputs``) and the pure computation (``lineage_frames``). Prints the times, the
lineage's size (evidence rows, reflection generations) and the ratios lineage / replay and
lineage / (replay + answer), whose target is under 10%. Last, the time the per-question views
spend reading back what reflections dropped and what the Reflector wrote instead
(``reflection_drops`` over the run's lineage and lineage events, read beforehand).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

SUITE = """
[suite]
name = "bench-lineage"

[dataset]
kind = "synthetic"
seeds = {seeds}
target_tokens = {tokens}
n_questions = {questions}

[engine]
observation = {{ messageTokens = {message_tokens}, bufferTokens = 0.2, bufferActivation = 0.8, blockAfter = 1.2 }}
reflection = {{ observationTokens = {observation_tokens} }}

[models]
observer = "omlab/observer"
reflector = "omlab/reflector"
actor = "omlab/reader"
judge = "omlab/judge"

[latency]
default = {{ kind = "token-rate" }}

[phases]
run = ["prepare", "answer"]

[cache]
mode = "off"
prepared = false

[run]
workers = 1
"""


def phase_seconds(conversations, phase: str) -> float:
    """Seconds the run spent in ``phase``, summed over its conversations (one worker: wall time)."""
    import pandas as pd

    rows = conversations[conversations["phase"] == phase]
    spans = pd.to_datetime(rows["finished_at"], utc=True) - pd.to_datetime(rows["started_at"], utc=True)
    return float(spans.dt.total_seconds().sum())


def split_lineage(catalog, run_id: str, conversations, scope: str) -> tuple[float, float]:
    """Seconds ``run_lineage`` spends reading the run's tables and computing: its two halves, run apart."""
    from omlab.bench.lineage import lineage_of, read_inputs

    started = time.perf_counter()
    inputs = read_inputs(catalog, run_id)
    read_s = time.perf_counter() - started
    started = time.perf_counter()
    lineage_of(inputs, conversations, scope=scope)
    return read_s, time.perf_counter() - started


def main(
    tokens: int, n_conversations: int, questions: int, message_tokens: int, observation_tokens: int, repeat: int
) -> None:
    from omlab.bench.lineage import LINEAGE_EVENT_TYPES, reflection_drops, run_lineage
    from omlab.bench.results import ResultsCatalog, conversations_df, events_df, lineage_df, steps_df
    from omlab.bench.run.options import RunOptions
    from omlab.bench.run.runner import run_suite
    from omlab.bench.suite.dataset import load_conversations
    from omlab.bench.suite.suite_file import load_suite

    with tempfile.TemporaryDirectory(prefix="omlab-lineage-") as folder:
        suite_path = Path(folder) / "lineage.toml"
        suite_path.write_text(
            SUITE.format(
                seeds=list(range(1, n_conversations + 1)),
                tokens=tokens // n_conversations,
                questions=questions,
                message_tokens=message_tokens,
                observation_tokens=observation_tokens,
            ),
            encoding="utf-8",
        )
        results = Path(folder) / "results"
        started = time.perf_counter()
        (summary,) = run_suite(suite_path, RunOptions(results_dir=results, progress=False, auto_resume=False))
        run_wall = time.perf_counter() - started
        catalog = ResultsCatalog(results)
        phases = conversations_df(catalog, summary.run_id)
        replay_s, answer_s = phase_seconds(phases, "prepare"), phase_seconds(phases, "answer")
        message_tokens_total = int(phases.loc[phases["phase"] == "prepare", "n_message_tokens"].sum())
        generations = int(steps_df(catalog, summary.run_id)["generation"].max())

        suite = load_suite(suite_path)
        _, conversations = load_conversations(suite.dataset, suite.base_dir)
        times, evidence, questions_frame = [], None, None
        for _ in range(repeat):
            started = time.perf_counter()
            evidence, questions_frame = run_lineage(catalog, summary.run_id, conversations, scope=suite.replay.scope)
            times.append(time.perf_counter() - started)
        read_s, compute_s = split_lineage(catalog, summary.run_id, conversations, suite.replay.scope)
        lineage = lineage_df(catalog, summary.run_id)
        events = events_df(catalog, summary.run_id, types=list(LINEAGE_EVENT_TYPES))
        started = time.perf_counter()
        drops = reflection_drops(lineage, events)
        drops_s = time.perf_counter() - started

    work = replay_s + answer_s
    print(
        f"run: {n_conversations} conversation(s), {message_tokens_total:,} message tokens, "
        f"{summary.n_questions} questions, messageTokens={message_tokens:,}, observationTokens={observation_tokens:,}"
    )
    print(f"lineage: {len(evidence):,} evidence rows, {len(questions_frame):,} questions, {generations} generations")
    print(f"  fates: {evidence['fate'].value_counts().to_dict()}")
    print(f"replay (prepare phase): {replay_s:8.2f} s")
    print(f"answer phase:           {answer_s:8.2f} s")
    print(f"whole run_suite:        {run_wall:8.2f} s (also loads data, writes metrics and the lineage)")
    warm = statistics.median(times[1:]) if len(times) > 1 else float("nan")
    print(f"run_lineage: {times[0]:.3f} s first call (empty word cache), {warm:.3f} s median of later calls")
    print(f"  of which reading the run's tables {read_s:.3f} s, computing (lineage_frames) {compute_s:.3f} s")
    print(f"lineage / replay:          {times[0] / replay_s:.4f} ({100 * times[0] / replay_s:.2f}%)")
    print(f"lineage / (replay+answer): {times[0] / work:.4f} ({100 * times[0] / work:.2f}%, target < 10%)")
    print(
        f"reflection_drops (the per-question views' dropped lines and what the Reflector wrote instead): "
        f"{drops_s:.3f} s for {len(drops):,} dropped lines ({drops['how'].value_counts().to_dict()})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1_000_000, help="total conversation tokens (default 1M)")
    parser.add_argument("--conversations", type=int, default=1, help="split the tokens over this many conversations")
    parser.add_argument(
        "--questions", type=int, default=30, help="questions per conversation (the generator plants at most ~32)"
    )
    parser.add_argument("--message-tokens", type=int, default=30_000, help="observation.messageTokens")
    parser.add_argument("--observation-tokens", type=int, default=40_000, help="reflection.observationTokens")
    parser.add_argument("--repeat", type=int, default=3, help="how many times run_lineage is timed")
    args = parser.parse_args()
    main(args.tokens, args.conversations, args.questions, args.message_tokens, args.observation_tokens, args.repeat)
