"""LoCoMo's official QA protocol (``task_eval/gpt_utils.py``), as an option of a suite.

With ``[scoring] protocol = "official"`` a LoCoMo run asks its questions as the official QA pipeline
does (benchmarks.md §2.5):

* every question is put in the official answer prompt (a short-phrase instruction; category 5 gets
  its own prompt);
* category 2 (temporal) questions get the "use the date of the conversation" hint appended;
* category 5 (adversarial) questions become a two-option question, "Not mentioned in the
  conversation" against the distractor, and a reply naming an option (``a``, ``(b)``) is mapped
  back to that option's text, as the official ``get_cat_5_answer`` does; the official script
  orders the options at random, omlab orders them by a hash of the question id (half each way,
  reproducible);
* image turns read ``<text> and shared <caption>.`` as in the official transcript (the loader's
  ``caption_style="official"``);
* the speakers keep their names: replayed messages carry them (``Message.name``), so the
  Observer's history reads ``Caroline (1:56 PM): …`` and the context names who said what;
* the actor gets one user message, built as the official ``get_gpt_answers`` builds its query:
  the context, ``"\n\n"``, and ``QA_PROMPT`` (``QA_PROMPT_CAT_5``) formatted with the question,
  byte for byte (:meth:`LocomoQAProtocol.query`). The context is the official opening
  (``CONV_START_PROMPT`` with the two names, speaker_a first; the official code takes them in a
  set's order) followed by omlab's memory as text (:func:`context_text`) where the official
  pipeline puts the whole transcript.

The official wording is read from the user's copy of LoCoMo's ``task_eval/gpt_utils.py``
(``[scoring] official_files``: the file, or the LoCoMo checkout that holds it); it is never
shipped with omlab. Without it, omlab's own wording of the same protocol is used and the run says
so (:attr:`LocomoQAProtocol.source`).

Aggregation: the official ``evaluate_qa.py`` stores each question's F1 rounded to 3 decimals and
averages those; ``[scoring] aggregation = "official"`` does the same (the default with the official
protocol), ``"mean"`` averages the unrounded F1 (:func:`aggregate_f1_values`).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from omlab.bench.datasets.locomo import ADVERSARIAL_GOLD
from omlab.bench.datasets.schema import Question

TEMPORAL_CATEGORY = 2
ADVERSARIAL_CATEGORY = 5
OFFICIAL_FILE = Path("task_eval") / "gpt_utils.py"
F1_DECIMALS = 3


class ProtocolFileError(ValueError):
    """The official file cannot be read or does not hold the expected wording (names the file)."""


@dataclass(frozen=True, slots=True)
class LocomoQAProtocol:
    """The wording of the official QA protocol (see the module docstring).

    Attributes:
        answer_prompt: ``str.format`` template with one ``{}`` for the question.
        adversarial_prompt: The same for category 5 questions.
        temporal_hint: Appended to category 2 questions.
        two_options: Appended to category 5 questions, with two ``{}`` for options (a) and (b).
        conversation_start: Opens the context, with two ``{}`` for the speakers' names.
        not_mentioned: The "not mentioned" option's text.
        source: ``"omlab"`` for omlab's own wording, else the file it was read from.
        sha256: Digest of the wording (goes into the run's config hash).
    """

    answer_prompt: str
    adversarial_prompt: str
    temporal_hint: str
    two_options: str
    conversation_start: str
    not_mentioned: str = ADVERSARIAL_GOLD
    source: str = "omlab"

    @property
    def sha256(self) -> str:
        parts = (
            self.answer_prompt,
            self.adversarial_prompt,
            self.temporal_hint,
            self.two_options,
            self.not_mentioned,
            self.conversation_start,
        )
        return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()

    def start(self, speaker_a: str, speaker_b: str) -> str:
        """The opening of the context: the conversation start with the two names."""
        return self.conversation_start.format(speaker_a, speaker_b)

    def query(self, context: str, question: Question) -> tuple[str, dict[str, str] | None]:
        """The whole message the actor gets, as the official code joins it: ``context + "\n\n" +``
        the formatted prompt (:meth:`ask`); and the category 5 options."""
        prompt, options = self.ask(question)
        return context + "\n\n" + prompt, options

    def ask(self, question: Question) -> tuple[str, dict[str, str] | None]:
        """The prompt for ``question`` (the official prompt, its newlines kept, formatted with the
        question) and, for category 5, the options ``{"a": .., "b": ..}`` a reply is mapped back
        with (:meth:`answer_of`)."""
        if question.category == TEMPORAL_CATEGORY:
            return self.answer_prompt.format(question.question + self.temporal_hint), None
        if question.category == ADVERSARIAL_CATEGORY:
            options = self.options(question)
            text = question.question + self.two_options.format(options["a"], options["b"])
            return self.adversarial_prompt.format(text), options
        return self.answer_prompt.format(question.question), None

    def options(self, question: Question) -> dict[str, str]:
        """Options (a) and (b) of a category 5 question: "not mentioned" and the distractor (the
        file's ``answer`` when it has one, as the official script reads it), in an order fixed by
        the question id."""
        distractor = question.answer if question.answer != ADVERSARIAL_GOLD else question.adversarial_answer or ""
        not_mentioned_first = hashlib.sha256(question.id.encode("utf-8")).digest()[0] % 2 == 0
        if not_mentioned_first:
            return {"a": self.not_mentioned, "b": distractor}
        return {"a": distractor, "b": self.not_mentioned}

    @staticmethod
    def answer_of(reply: str, options: dict[str, str] | None) -> str:
        """The reply as the official ``get_cat_5_answer`` reads it: a one-letter or ``(x)`` reply
        becomes that option's text; anything else is kept (stripped and lower-cased, as there)."""
        if options is None:
            return reply
        text = reply.strip().lower()
        if len(text) == 1:
            return options["a"] if "a" in text else options["b"]
        if len(text) == 3:
            return options["a"] if "(a)" in text else options["b"]
        return text


OMLAB_WORDING = LocomoQAProtocol(
    answer_prompt=(
        "\nUsing the conversation above, answer the question below with a short phrase, in the "
        "conversation's own words where you can.\n\nQuestion: {} Short answer:\n"
    ),
    adversarial_prompt="\nUsing the conversation above, answer the question below.\n\nQuestion: {} Short answer:\n",
    temporal_hint=" Give an approximate date, worked out from the dates of the conversation.",
    two_options=" Choose one answer: (a) {} (b) {}. ",
    conversation_start=(
        "What follows is a memory of a conversation between two people, {} and {}, held over "
        "several days; what was said is dated.\n\n"
    ),
)
"""omlab's own words for the same protocol (used when no official file is given)."""


def locomo_protocol(official_files: str | Path | None) -> LocomoQAProtocol:
    """The official wording from ``official_files`` (a ``gpt_utils.py`` or a LoCoMo checkout), or
    :data:`OMLAB_WORDING` when None."""
    if official_files is None:
        return OMLAB_WORDING
    return _load(str(Path(official_files).expanduser().resolve()))


def official_file(path: str | Path) -> Path:
    """``path`` itself when it is a file, else ``<path>/task_eval/gpt_utils.py``."""
    candidate = Path(path).expanduser()
    return candidate if candidate.is_file() else candidate / OFFICIAL_FILE


@cache
def _load(path: str) -> LocomoQAProtocol:
    file = official_file(path)
    try:
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    except (OSError, SyntaxError, UnicodeDecodeError) as error:
        raise ProtocolFileError(f"{file}: cannot read LoCoMo's gpt_utils.py: {error}") from None
    constants = _module_strings(tree)
    missing = [name for name in ("QA_PROMPT", "QA_PROMPT_CAT_5", "CONV_START_PROMPT") if name not in constants]
    hint = _appended_string(tree, TEMPORAL_CATEGORY)
    options = _appended_string(tree, ADVERSARIAL_CATEGORY, containing="{}")
    not_mentioned = _first_format_argument(tree, ADVERSARIAL_CATEGORY)
    missing += [
        what
        for what, found in (
            ("the category 2 hint", hint),
            ("the category 5 two-option text", options),
            ("the 'not mentioned' option", not_mentioned),
        )
        if found is None
    ]
    if missing:
        raise ProtocolFileError(
            f"{file}: not LoCoMo's task_eval/gpt_utils.py as expected: cannot find {', '.join(missing)}"
        )
    return LocomoQAProtocol(
        answer_prompt=constants["QA_PROMPT"],
        adversarial_prompt=constants["QA_PROMPT_CAT_5"],
        temporal_hint=hint,
        two_options=options,
        conversation_start=constants["CONV_START_PROMPT"],
        not_mentioned=not_mentioned,
        source=str(file),
    )


def _module_strings(tree: ast.Module) -> dict[str, str]:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def _category_branches(tree: ast.Module, category: int) -> list[ast.If]:
    """``if qa['category'] == <category>:`` branches (also as ``elif``)."""
    branches = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
            continue
        test = node.test
        left = test.left
        if (
            isinstance(left, ast.Subscript)
            and isinstance(left.slice, ast.Constant)
            and left.slice.value == "category"
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == category
        ):
            branches.append(node)
    return branches


def _branch_nodes(branch: ast.If) -> Iterable[ast.AST]:
    for statement in branch.body:
        yield from ast.walk(statement)


def _appended_string(tree: ast.Module, category: int, containing: str = "") -> str | None:
    """The string added to ``qa['question']`` in the category's branch."""
    for branch in _category_branches(tree, category):
        for node in _branch_nodes(branch):
            if (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Add)
                and _is_question(node.left)
                and isinstance(node.right, ast.Constant)
                and isinstance(node.right.value, str)
                and containing in node.right.value
            ):
                return node.right.value
    return None


def _first_format_argument(tree: ast.Module, category: int) -> str | None:
    for branch in _category_branches(tree, category):
        for node in _branch_nodes(branch):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "format"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                return node.args[0].value
    return None


def _is_question(node: ast.AST) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "question"


def context_text(messages: Iterable[Mapping[str, Any]]) -> str:
    """The actor's context (``build_context``'s chat messages) as one text: the memory's system
    messages as they are, a raw message as the official transcript writes a turn
    (``Caroline said, "…"``; its role when it has no name), separated by blank lines."""
    blocks = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
        text = str(content or "").strip()
        if not text:
            continue
        if message.get("role") == "system":
            blocks.append(text)
        else:
            speaker = message.get("name") or str(message.get("role", "")).capitalize()
            blocks.append(f'{speaker} said, "{text}"')
    return "\n\n".join(blocks)


def aggregate_f1_values(values: Iterable[float], aggregation: str) -> list[float]:
    """Per-question F1 as the aggregation averages them: rounded to 3 decimals (``official``, as
    the official ``evaluate_qa.py`` stores them) or as computed (``mean``)."""
    if aggregation == "official":
        return [round(value, F1_DECIMALS) for value in values]
    if aggregation == "mean":
        return list(values)
    raise ValueError(f"F1 aggregation must be official or mean, got {aggregation!r}")


__all__ = [
    "F1_DECIMALS",
    "OMLAB_WORDING",
    "LocomoQAProtocol",
    "ProtocolFileError",
    "aggregate_f1_values",
    "context_text",
    "locomo_protocol",
    "official_file",
]
