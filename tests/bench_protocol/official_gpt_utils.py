"""Run LoCoMo's ``task_eval/gpt_utils.py`` code path offline and capture the prompts it sends.

The module is loaded from a file (the user's copy of the official file, or a stand-in we write)
with its imports stubbed: ``global_methods.run_chatgpt`` records each query instead of calling a
model, ``tiktoken`` counts characters, ``tqdm`` passes its iterable through and
``task_eval.rag_utils`` is never used (no RAG). ``random.random`` is replaced so that category 5
options come in the order omlab chose, which makes the two prompts comparable byte for byte.
"""

from __future__ import annotations

import copy
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

MODEL = "gpt-4-turbo"  # in the official MAX_LENGTH table, 128k tokens: nothing is truncated


class _Encoding:
    @staticmethod
    def encode(text: str) -> list[str]:
        return list(text)


def _stub(name: str, **attributes: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    return module


def load_gpt_utils(path: Path, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The module at ``path`` imported with its dependencies stubbed (undone by ``monkeypatch``)."""
    stubs = {
        "global_methods": _stub("global_methods", run_chatgpt=None),
        "task_eval": _stub("task_eval", __path__=[]),
        "task_eval.rag_utils": _stub("task_eval.rag_utils", get_embeddings=None),
        "tiktoken": _stub("tiktoken", encoding_for_model=lambda model: _Encoding()),
        "tqdm": _stub("tqdm", tqdm=lambda iterable, **_: iterable),
    }
    for name, module in stubs.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the file puts its checkout on the path
    loader = importlib.machinery.SourceFileLoader("locomo_gpt_utils_under_test", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def official_queries(module: types.ModuleType, sample: dict[str, Any], choices: Iterator[float]) -> list[str]:
    """The query ``get_gpt_answers`` sends for each question of ``sample`` (batch size 1, no RAG),
    in order; ``choices`` feeds ``random.random`` (one value per category 5 question)."""
    sent: list[str] = []

    def run_chatgpt(query: str, **_: Any) -> str:
        sent.append(query)
        return "(a)"

    sample = copy.deepcopy(sample)
    for qa in sample["qa"]:  # upstream reads qa['answer'] for category 5, which the file lacks
        qa.setdefault("answer", qa.get("adversarial_answer"))
    module.run_chatgpt = run_chatgpt
    module.random = SimpleNamespace(random=lambda: next(choices))
    args = SimpleNamespace(model=MODEL, batch_size=1, use_rag=False, overwrite=True)
    module.get_gpt_answers(sample, {"qa": [{} for _ in sample["qa"]]}, "prediction", args)
    return sent


def official_transcript(module: types.ModuleType, sample: dict[str, Any]) -> str:
    """``get_input_context``'s transcript of the whole conversation (no start prompt)."""
    args = SimpleNamespace(model=MODEL, batch_size=1)
    return module.get_input_context(sample["conversation"], 0, _Encoding(), args)
