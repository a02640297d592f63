"""Credential scrubbing rules."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.bench.results.redact import drop_secret_keys, is_secret_key, redact_text, to_safe_json


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "apiKey",
        "API-KEY",
        "x-api-key",
        "openai_api_key",
        "Authorization",
        "proxy-authorization",
        "auth",
        "token",
        "access_token",
        "accessToken",
        "refresh_token",
        "hfToken",
        "id_token",
        "client_secret",
        "secret",
        "password",
        "db_passwd",
        "credentials",
        "Cookie",
        "set-cookie",
        "bearer",
        "private_key",
    ],
)
def test_credential_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "input_tokens",
        "output_tokens",
        "tokens",
        "tokensObserved",
        "tokensToObserve",
        "observationTokens",
        "max_tokens",
        "maxOutputTokens",
        "token_count",
        "tokenizer",
        "prompt_tokens",
        "total_tokens",
        "n_message_tokens",
        "author",
        "authored_at",
        "key",
        "record_key",
        "model",
    ],
)
def test_count_and_ordinary_keys_are_kept(key):
    assert not is_secret_key(key)


def test_text_redaction():
    assert redact_text("key sk-ant-api03-abcdefghijklmnop123 end") == "key [redacted] end"
    assert redact_text("Authorization: Bearer abcdefghijklmnop.qrs") == "Authorization: [redacted]"
    assert redact_text("hf_" + "a1" * 12) == "[redacted]"
    assert redact_text("sk-short and ordinary words") == "sk-short and ordinary words"


def test_json_strings_are_parsed_and_cleaned():
    assert json.loads(to_safe_json('{"a": {"api_key": "k", "b": [1, {"token": "t"}]}}')) == {"a": {"b": [1, {}]}}
    assert to_safe_json('{"tokens":   3}') == '{"tokens": 3}'
    assert to_safe_json({"when": __import__("datetime").date(2024, 1, 2)}) == '{"when": "2024-01-02"}'
    with pytest.raises(ValueError, match="not valid JSON"):
        to_safe_json("not json")


_keys = st.one_of(
    st.sampled_from(["api_key", "Authorization", "token", "tokens", "input_tokens", "x"]), st.text(max_size=8)
)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_keys, children, max_size=4),
    max_leaves=15,
)


def _keys_in(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys_in(item)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_keys, _json, max_size=4))
def test_no_secret_key_survives_at_any_depth_and_others_all_do(value):
    cleaned = json.loads(to_safe_json(value))
    assert not any(is_secret_key(key) for key in _keys_in(cleaned))
    assert cleaned == json.loads(json.dumps(drop_secret_keys(value)))
    assert sorted(_keys_in(cleaned)) == sorted(_keys_outside_secrets(value))


def _keys_outside_secrets(value):
    """Every key not named like a credential and not inside a credential's value."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not is_secret_key(key):
                yield key
                yield from _keys_outside_secrets(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys_outside_secrets(item)


def test_dataclasses_and_mappings_inside_payloads_are_scrubbed():
    from dataclasses import dataclass
    from types import MappingProxyType

    @dataclass
    class Request:
        model: str
        provider_options: dict

    payload = {
        "request": Request("m", {"api_key": "k", "max_tokens": 5}),
        "frozen": MappingProxyType({"password": "p", "n": 1}),
        "tags": {"x"},
    }
    assert json.loads(to_safe_json(payload)) == {
        "request": {"model": "m", "provider_options": {"max_tokens": 5}},
        "frozen": {"n": 1},
        "tags": ["x"],
    }
    with pytest.raises(ValueError, match="cannot be written as JSON"):
        to_safe_json({(1, 2): "tuple keys"})
