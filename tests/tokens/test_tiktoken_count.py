"""Exact tiktoken counts load from litellm's bundled BPE files, never from the network."""

from __future__ import annotations

import pytest
import tiktoken.load
import tiktoken.registry

from omlab.tokens.bpe_cache import litellm_tokenizer_dir
from omlab.tokens.tiktoken_count import (
    EncodingUnavailableError,
    bpe_cache_path,
    count_tiktoken,
    load_encoding,
)

JSON_EXAMPLE = '{"id":"usr_29f84h","plan":"pro","seats":12}'


@pytest.fixture
def no_network(monkeypatch):
    """Fresh encoding caches, and any attempt to download a file fails the test."""

    def refuse(blobpath: str) -> bytes:
        raise AssertionError(f"network access attempted: {blobpath}")

    monkeypatch.setattr(tiktoken.load, "read_file", refuse)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    load_encoding.cache_clear()
    yield
    load_encoding.cache_clear()


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base", "p50k_base"])
def test_bundled_encodings_load_offline(no_network, encoding):
    path = bpe_cache_path(encoding)
    assert path.parent == litellm_tokenizer_dir()
    assert path.is_file()
    assert count_tiktoken("Hello, world!", encoding) == 4


def test_known_counts(no_network):
    assert count_tiktoken(JSON_EXAMPLE) == 19  # tokenx.md: o200k gives 19 (tokenx estimates 17)
    assert count_tiktoken("") == 0
    assert count_tiktoken("Bonjour à tous", "cl100k_base") == len(
        load_encoding("cl100k_base").encode_ordinary("Bonjour à tous")
    )


def test_special_token_text_is_counted_as_text(no_network):
    assert count_tiktoken("<|endoftext|>") > 1


def test_encoding_is_loaded_once(no_network):
    assert load_encoding("o200k_base") is load_encoding("o200k_base")


def test_missing_bpe_file_raises_a_clear_error(no_network, monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(EncodingUnavailableError, match="o200k_base.*not available offline"):
        count_tiktoken("hello")


def test_r50k_is_not_bundled_by_litellm(no_network):
    with pytest.raises(EncodingUnavailableError, match="r50k_base"):
        load_encoding("r50k_base")


def test_unknown_encoding_is_rejected():
    with pytest.raises(ValueError, match="unknown tiktoken encoding 'nope'"):
        count_tiktoken("hello", "nope")
