"""Which environment variables hold credentials, and that their values are blanked wherever error
text is written."""

from __future__ import annotations

from omlab.bench.results import redact
from omlab.llm.secrets import environment_secrets, is_secret_variable


def test_credential_variables_are_named_by_a_word_part_not_a_substring():
    for name in (
        "OPENAI_API_KEY",
        "GROQ_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "HF_TOKEN",
        "AZURE_AD_TOKEN",
        "DB_PASSWORD",
    ):
        assert is_secret_variable(name), name
    for name in ("TIKTOKEN_CACHE_DIR", "MAX_TOKENS", "OPENAI_API_BASE", "KEYBOARD", "GOOGLE_KEY_FILE", "PATH"):
        assert not is_secret_variable(name), name


def test_environment_secrets_are_the_long_enough_values_of_credential_variables():
    environ = {"OPENAI_API_KEY": "fedcba9876543210" * 4, "SOME_TOKEN": "1", "HOME": "/home/user-with-a-long-path"}
    assert environment_secrets(environ) == {"fedcba9876543210" * 4}


def test_redact_text_blanks_an_environment_key_of_any_shape(monkeypatch):
    key = "0123456789abcdef" * 2
    monkeypatch.setenv("OPENAI_API_KEY", key)
    redact.forget_environment()
    try:
        text = redact.redact_text(f"Incorrect API key provided: {key}.")
        assert key not in text and redact.REDACTED in text
    finally:
        monkeypatch.delenv("OPENAI_API_KEY")
        redact.forget_environment()
