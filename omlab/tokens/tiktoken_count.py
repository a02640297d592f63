"""Exact token counts with tiktoken, without network access.

tiktoken downloads its BPE files on first use. litellm bundles the o200k_base, cl100k_base and
p50k_base files under the names tiktoken's cache expects (the SHA-1 of the download URL), so
``prepare_bpe_cache()`` points ``TIKTOKEN_CACHE_DIR`` there. Before loading an encoding we check
that its file is in the cache folder: a missing file raises :class:`EncodingUnavailableError`
instead of letting tiktoken try the network.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from omlab.tokens.bpe_cache import prepare_bpe_cache

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "SUPPORTED_ENCODINGS",
    "EncodingUnavailableError",
    "bpe_cache_path",
    "count_tiktoken",
    "load_encoding",
]

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
#: Encoding name -> the BPE file tiktoken loads for it.
_BPE_URLS = {
    "o200k_base": _BLOB + "o200k_base.tiktoken",
    "o200k_harmony": _BLOB + "o200k_base.tiktoken",
    "cl100k_base": _BLOB + "cl100k_base.tiktoken",
    "p50k_base": _BLOB + "p50k_base.tiktoken",
    "p50k_edit": _BLOB + "p50k_base.tiktoken",
    "r50k_base": _BLOB + "r50k_base.tiktoken",
}
SUPPORTED_ENCODINGS = tuple(_BPE_URLS)


class EncodingUnavailableError(RuntimeError):
    """The BPE file of a tiktoken encoding is not available offline."""


def bpe_cache_path(encoding: str) -> Path:
    """Where tiktoken looks for the BPE file of ``encoding`` (same rules as tiktoken's cache)."""
    try:
        url = _BPE_URLS[encoding]
    except KeyError:
        raise ValueError(
            f"unknown tiktoken encoding {encoding!r}; supported: {', '.join(SUPPORTED_ENCODINGS)}"
        ) from None
    prepare_bpe_cache()
    cache_dir = (
        os.environ.get("TIKTOKEN_CACHE_DIR")
        or os.environ.get("DATA_GYM_CACHE_DIR")
        or os.path.join(tempfile.gettempdir(), "data-gym-cache")
    )
    return Path(cache_dir) / hashlib.sha1(url.encode()).hexdigest()


@functools.cache
def load_encoding(encoding: str = "o200k_base") -> tiktoken.Encoding:
    """The tiktoken encoding ``encoding``, loaded once per process from the offline BPE file."""
    path = bpe_cache_path(encoding)
    if not path.is_file():
        raise EncodingUnavailableError(
            f"tiktoken encoding {encoding!r} is not available offline: expected its BPE file at {path} "
            "(TIKTOKEN_CACHE_DIR; litellm bundles o200k_base, cl100k_base and p50k_base)"
        )
    import tiktoken

    return tiktoken.get_encoding(encoding)


def count_tiktoken(text: str, encoding: str = "o200k_base") -> int:
    """The exact number of tokens of ``text`` in ``encoding``.

    Special-token strings such as ``<|endoftext|>`` are counted as ordinary text, since messages are
    user content, never control sequences.
    """
    if not text:
        return 0
    return len(load_encoding(encoding).encode_ordinary(text))
