"""Where tiktoken finds its BPE files without the network.

tiktoken downloads its BPE files on first use unless ``TIKTOKEN_CACHE_DIR`` points at a copy;
litellm bundles the cl100k/o200k/p50k files under the names tiktoken's cache expects, so we point
tiktoken there (found without importing litellm). A user's own ``TIKTOKEN_CACHE_DIR`` wins.
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


def prepare_bpe_cache() -> None:
    """Point ``TIKTOKEN_CACHE_DIR`` at litellm's bundled files (idempotent; never overrides a
    value the user set)."""
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        tokenizers = litellm_tokenizer_dir()
        if tokenizers is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(tokenizers)
