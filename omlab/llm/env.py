"""Process environment that keeps omlab offline-safe.

``import litellm`` fetches a price map from the network unless ``LITELLM_LOCAL_MODEL_COST_MAP`` is
set, and tiktoken downloads its BPE files on first use unless ``TIKTOKEN_CACHE_DIR`` points at a
copy; litellm bundles cl100k/o200k files, so we point tiktoken there. Both are defaults only: a
user's own settings win.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def litellm_tokenizer_dir() -> Path | None:
    """The folder of BPE files bundled with litellm, found without importing litellm."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return path if path.is_dir() else None


def prepare_environment() -> None:
    """Set the offline defaults (idempotent; never overrides a value the user set)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        tokenizers = litellm_tokenizer_dir()
        if tokenizers is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(tokenizers)
