"""Scorers: LoCoMo F1, LongMemEval judge prompts and verdicts, retention recall, aggregates."""

from omlab.bench.scoring.aggregate import (
    LoCoMoReport,
    LongMemEvalReport,
    locomo_report,
    longmemeval_report,
)
from omlab.bench.scoring.bootstrap import ConfidenceInterval, bootstrap_ci, score_ci, wilson_ci
from omlab.bench.scoring.f1 import locomo_f1, multi_answer_f1, normalize_answer, token_f1
from omlab.bench.scoring.longmemeval_judge import (
    DEFAULT_JUDGE_PROMPTS,
    JUDGE_REQUEST_OPTIONS,
    JudgePromptError,
    JudgePrompts,
    judge_messages,
    judge_prompt,
    load_judge_prompts,
)
from omlab.bench.scoring.porter import porter_stem
from omlab.bench.scoring.retention import answer_retained, evidence_retained
from omlab.bench.scoring.verdicts import parse_verdict

__all__ = [
    "DEFAULT_JUDGE_PROMPTS",
    "JUDGE_REQUEST_OPTIONS",
    "ConfidenceInterval",
    "JudgePromptError",
    "JudgePrompts",
    "LoCoMoReport",
    "LongMemEvalReport",
    "answer_retained",
    "bootstrap_ci",
    "evidence_retained",
    "judge_messages",
    "judge_prompt",
    "load_judge_prompts",
    "locomo_f1",
    "locomo_report",
    "longmemeval_report",
    "multi_answer_f1",
    "normalize_answer",
    "parse_verdict",
    "porter_stem",
    "score_ci",
    "token_f1",
    "wilson_ci",
]
