"""What the report's words and metric names mean: one list for the report's glossary section, the
README's glossary and the labels the report's tables print instead of raw metric names."""

from __future__ import annotations

METRIC_LABELS: dict[str, str] = {
    "compression_observation": "observation compression (message tokens ÷ observation tokens)",
    "compression_observation_per_cycle": "observation compression, mean per cycle",
    "compression_reflection": "reflection compression (log tokens in ÷ out)",
    "compression_reflection_per_cycle": "reflection compression, mean per reflection",
    "compression_context": "context compression (full history ÷ memory context, at question time)",
    "context_tokens_avg": "context tokens, mean over steps",
    "context_tokens_peak": "context tokens, peak",
    "question_context_tokens_avg": "context tokens at question time, mean",
    "full_history_tokens_avg": "full-history tokens at question time, mean",
    "blocked_s": "blocked time (virtual s the actor waited)",
    "blocked_s_per_conversation": "blocked time per conversation (s)",
    "blocked_steps": "steps that blocked",
    "sync_observations": "synchronous observations",
    "sync_reflections": "synchronous reflections",
    "buffered_observations": "buffered observations (background Observer calls)",
    "buffered_reflections": "buffered reflections (background Reflector calls)",
    "activations": "activations (buffered chunks moved into the log)",
    "reflection_activations": "reflection activations",
    "latency_s_p50": "model latency, median (s)",
    "latency_s_p95": "model latency, 95th percentile (s)",
}
"""The label the report prints for each metric it lists under its own name."""

GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "observation",
        (
            "a dated, prioritised line the Observer wrote about raw messages; the observation log is "
            "what the actor sees instead of those messages"
        ),
    ),
    (
        "generation (gen N)",
        (
            "one version of the observation log: a reflection condenses the log into the next "
            "generation, so 'gen 3: kept' means the line (or its evidence) survived into generation 3"
        ),
    ),
    ("reflection", "the Reflector condensing the observation log when it passes observationTokens"),
    (
        "buffered observation / activation",
        (
            "with bufferTokens, the Observer runs in the background on chunks of messages; an activation "
            "moves finished chunks into the log when the threshold is reached, without the actor waiting"
        ),
    ),
    (
        "synchronous observation",
        (
            "an Observer call the actor had to wait for (no buffered chunk could bring the context under "
            "the threshold, or blockAfter was reached)"
        ),
    ),
    ("blocked time", "virtual seconds the actor waited on synchronous observations and reflections"),
    (
        "compression",
        (
            "observation: message tokens observed ÷ observation tokens written; reflection: log tokens "
            "in ÷ out; context: the whole conversation's tokens ÷ the memory context's at question time"
        ),
    ),
    (
        "retention",
        "the gold answer is still in the memory context at question time (model-free: no judge)",
    ),
    (
        "evidence retention",
        "share of the evidence messages' content words still in the memory context at question time",
    ),
    (
        "carry evidence",
        "observation lines that hold words of a question's evidence messages (highlighted in the per-question view)",
    ),
    ("micro / task-averaged accuracy", "over all questions / the mean of the per-type accuracies"),
    ("abstention", "questions whose right answer is that the conversation does not say"),
    (
        "95% CI",
        (
            "Wilson score interval for a share of correct answers (accuracy, J, retention), percentile "
            "bootstrap for graded scores (F1)"
        ),
    ),
    (
        "cost as configured / paid",
        (
            "every call's tokens priced with this run's prices (cache hits included) / what this run "
            "actually paid a provider (a cached call costs 0)"
        ),
    ),
    (
        "tier",
        (
            "the ModelByInputTokens threshold that routed a call (upTo), chosen on routing_tokens: the "
            "new messages' tokens for the Observer, the log's for the Reflector"
        ),
    ),
)
"""``(term, meaning)`` pairs, in reading order."""


def metric_label(name: str) -> str:
    """The label of metric ``name`` (the name itself for a metric without one)."""
    return METRIC_LABELS.get(name, name)


__all__ = ["GLOSSARY", "METRIC_LABELS", "metric_label"]
