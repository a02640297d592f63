"""Process environment that keeps omlab offline-safe.

``import litellm`` fetches a price map from the network unless ``LITELLM_LOCAL_MODEL_COST_MAP`` is
set, and tiktoken downloads its BPE files on first use unless ``TIKTOKEN_CACHE_DIR`` points at a
copy; litellm bundles cl100k/o200k files, so we point tiktoken there
(:mod:`omlab.tokens.bpe_cache`). Both are defaults only: a
user's own settings win.
"""

from __future__ import annotations

import os

from omlab.tokens.bpe_cache import prepare_bpe_cache


def prepare_environment() -> None:
    """Set the offline defaults (idempotent; never overrides a value the user set)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    prepare_bpe_cache()
