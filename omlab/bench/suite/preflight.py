"""Checking a suite against its dataset before any model call (``omlab run`` / ``omlab sweep``).

:func:`preflight` refuses, with a :class:`~omlab.bench.suite.suite_file.SuiteError` that names the key and the
fix, what would otherwise fail late or silently:

* the dataset file: missing, empty, or of another kind than ``[dataset] kind`` says ("this looks
  like a LoCoMo file: use kind = "locomo"");
* the conversations: none at all, or one without turns;
* the models of every grid cell: an unknown offline model (``omlab/nope``) or a provider litellm
  does not know (``foo/bar``);
* the judge prompts: a question type the judge would be asked about that has no template and no
  ``default`` (only when the run has a judge phase).

What a run accepts but must say is returned as warnings (:class:`InputWarning`): the dataset
oddities of :func:`omlab.bench.datasets.checks.input_warnings`, and models that no price resolves
for (their cost is unknown, kind ``unpriced_model``). The runner prints them, records them in the
run (``config_json["warnings"]`` and the ``warnings`` metric) and the report lists them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from omlab.bench.datasets.checks import InputWarning, input_refusals, input_warnings, warning_counts
from omlab.bench.datasets.errors import DatasetError
from omlab.bench.datasets.schema import Conversation, DatasetInfo
from omlab.bench.datasets.sniff import KIND_LABELS, guess_kind
from omlab.bench.suite.dataset import caption_style, load_conversations, resolve_path
from omlab.bench.suite.suite_file import Suite, SuiteError, expand_grid

UNPRICED_KIND = "unpriced_model"


@dataclass(slots=True)
class Preflight:
    """A checked suite: its dataset (limits applied) and the warnings the run will carry."""

    info: DatasetInfo
    conversations: list[Conversation]
    warnings: list[InputWarning] = field(default_factory=list)


def preflight(suite: Suite, limit: int | None = None) -> Preflight:
    """Check ``suite`` and load its dataset (see the module docstring); no model is called.

    Raises:
        SuiteError: Anything that would make the run fail or mislead, naming the key and the fix.
    """
    check_dataset_file(suite)
    info, conversations = _load(suite, limit)
    refusals = input_refusals(conversations, source=info.source or "the dataset")
    if refusals:
        more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
        raise SuiteError(suite.source, "dataset", refusals[0] + more)
    unpriced = check_models(suite)
    check_protocol(suite)
    if "judge" in suite.phases:
        check_judge_prompts(suite, conversations)
    return Preflight(info, conversations, input_warnings(conversations) + unpriced)


def check_dataset_file(suite: Suite) -> None:
    """Refuse a missing or empty dataset file, or one whose shape says it is another kind."""
    spec = suite.dataset
    if spec.path is None or spec.path.startswith(("http://", "https://", "postgres://", "postgresql://")):
        return
    path = resolve_path(spec.path, suite.base_dir)
    if not path.is_file():
        raise SuiteError(suite.source, "dataset.path", f"no such file {path} (paths are relative to the suite file)")
    with open(path, "rb") as handle:
        opening = handle.read(4096)
    if not opening.strip():
        raise SuiteError(suite.source, "dataset.path", f"{path} is empty: point it at a file with conversations")
    guessed = guess_kind(path)
    if guessed is not None and guessed != spec.kind:
        raise SuiteError(
            suite.source,
            "dataset.kind",
            f'{path.name} looks like {KIND_LABELS[guessed]}, not {spec.kind}: use kind = "{guessed}"',
        )


def check_models(suite: Suite) -> list[InputWarning]:
    """Refuse model strings that cannot resolve; return a warning per model no price resolves for.

    Every model of every grid cell is checked: the four roles, their ``upTo`` tiers and fallbacks,
    and models given in ``[engine]``.
    """
    from omlab.bench.suite.run_settings import model_strings
    from omlab.llm.model_names import unknown_model_problem
    from omlab.llm.pricing import price_call

    uses = _model_uses(suite, model_strings)
    for where, model in uses:
        problem = unknown_model_problem(model)
        if problem is not None:
            raise SuiteError(suite.source, where, problem)
    warnings = []
    seen: set[str] = set()
    for where, model in uses:
        if model in seen:
            continue
        seen.add(model)
        try:
            price = price_call(model, 1000, 1000, overrides=suite.prices)
        except ValueError as error:
            raise SuiteError(suite.source, "models.prices", str(error)) from None
        if price is None:
            warnings.append(
                InputWarning(
                    UNPRICED_KIND,
                    f"{where} {model!r}",
                    "no price in litellm's map or [models.prices]: its calls are counted without a cost; "
                    f'add [models.prices] "{model}" = {{ input_per_mtok = ..., output_per_mtok = ... }}',
                )
            )
    return warnings


def check_protocol(suite: Suite) -> None:
    """Refuse an official-files path that does not hold LoCoMo's official QA wording."""
    if suite.scoring.official_files is None:
        return
    from omlab.bench.scoring.locomo_protocol import ProtocolFileError, locomo_protocol, official_file

    path = official_file(resolve_path(suite.scoring.official_files, suite.base_dir))
    if not path.is_file():
        raise SuiteError(
            suite.source,
            "scoring.official_files",
            f"no such file {path}: give your copy of LoCoMo's task_eval/gpt_utils.py, or the LoCoMo checkout",
        )
    try:
        locomo_protocol(path)
    except ProtocolFileError as error:
        raise SuiteError(suite.source, "scoring.official_files", str(error)) from None


def check_judge_prompts(suite: Suite, conversations: Sequence[Conversation]) -> None:
    """Refuse a judge prompt file that has no template for a question type the judge will see."""
    from omlab.bench.scoring import load_judge_prompts
    from omlab.bench.scoring.longmemeval_judge import DEFAULT_JUDGE_PROMPTS, JudgePromptError
    from omlab.bench.scoring.required_scorers import J_CATEGORIES

    if suite.scoring.judge_prompts is None:
        prompts = DEFAULT_JUDGE_PROMPTS
    else:
        path = resolve_path(suite.scoring.judge_prompts, suite.base_dir)
        if not path.is_file():
            raise SuiteError(suite.source, "scoring.judge_prompts", f"no such file {path}")
        try:
            prompts = load_judge_prompts(path)
        except JudgePromptError as error:
            raise SuiteError(suite.source, "scoring.judge_prompts", str(error)) from None
    missing: dict[str, list[str]] = {}
    for conversation in conversations:
        for question in conversation.questions:
            if suite.dataset.kind == "locomo" and question.category not in J_CATEGORIES:
                continue
            try:
                prompts.key_for(question)
            except JudgePromptError:
                missing.setdefault(question.type, []).append(question.id)
    if missing:
        listed = "; ".join(f"{kind} ({len(ids)} questions, e.g. {ids[0]!r})" for kind, ids in missing.items())
        raise SuiteError(
            suite.source,
            "scoring.judge_prompts",
            f"{prompts.source} has no template for question types the judge will see: {listed}. "
            'Add a "default" template to the file (used for every type without its own), or leave '
            "judge_prompts out to use omlab's wording",
        )


def warning_records(warnings: Iterable[InputWarning]) -> list[dict[str, str]]:
    """The warnings as JSON records (what ``config_json["warnings"]`` holds)."""
    return [warning.to_dict() for warning in warnings]


def warning_metric_rows(warnings: Sequence[InputWarning | dict[str, Any]]) -> list[dict[str, Any]]:
    """``warnings`` metric rows: ``all`` and one per kind (n = the count)."""
    rows = [{"name": "warnings", "group_key": "all", "value": float(len(warnings)), "n": len(warnings)}]
    for kind, count in warning_counts(warnings).items():
        rows.append({"name": "warnings", "group_key": kind, "value": float(count), "n": count})
    return [{**row, "lo": None, "hi": None} for row in rows]


def format_warnings(warnings: Sequence[InputWarning], *, limit: int = 10) -> list[str]:
    """Lines to print: the first ``limit`` warnings and how many more there are."""
    lines = [f"warning: {warning.kind}: {warning}" for warning in warnings[:limit]]
    if len(warnings) > limit:
        lines.append(f"warning: ... and {len(warnings) - limit} more (all of them are listed in the run's report)")
    return lines


# --------------------------------------------------------------------------- helpers


def _load(suite: Suite, limit: int | None) -> tuple[DatasetInfo, list[Conversation]]:
    try:
        return load_conversations(suite.dataset, suite.base_dir, limit, caption_style=caption_style(suite))
    except DatasetError as error:
        raise SuiteError(suite.source, "dataset", str(error)) from None


def _model_uses(suite: Suite, model_strings: Any) -> list[tuple[str, str]]:
    """``(where, model string)`` for every model of every grid cell, each pair once."""
    uses: list[tuple[str, str]] = []
    for cell in expand_grid(suite):
        places = {
            "models.observer": cell.engine["observation"]["model"],
            "models.reflector": cell.engine["reflection"]["model"],
            "models.actor": cell.models["actor"],
            "models.judge": cell.models["judge"],
        }
        for where, spec in places.items():
            label = f"{where} (grid cell {cell.name})" if cell.point else where
            for model in model_strings(spec):
                if isinstance(model, str) and (label, model) not in uses:
                    uses.append((label, model))
    return uses


__all__ = [
    "UNPRICED_KIND",
    "Preflight",
    "check_dataset_file",
    "check_judge_prompts",
    "check_models",
    "check_protocol",
    "format_warnings",
    "preflight",
    "warning_metric_rows",
    "warning_records",
]
