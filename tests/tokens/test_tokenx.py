"""The tokenx 1.3.0 port against the worked examples of tokenx.md (checked against the npm package)."""

from __future__ import annotations

import itertools
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.tokens.tokenx import (
    DEFAULT_LANGUAGE_CONFIGS,
    JS_WHITESPACE,
    PUNCTUATION,
    LanguageConfig,
    estimate_token_count,
    is_within_token_limit,
    slice_by_tokens,
    split_by_tokens,
    split_segments,
)

ENGLISH = "Hello, world! This is a short sentence."
# Rebuilt from the per-word breakdown in tokenx.md §1 (the package's German test sentence).
GERMAN_WORDS = [
    ("Die", 1),
    ("pünktlich", 3),
    ("gewünschte", 4),
    ("Trüffelfüllung", 5),
    ("im", 1),
    ("übergestülpten", 5),
    ("Würzkümmel", 4),
    ("-", 1),
    ("Würfel", 2),
    ("ist", 1),
    ("kümmerlich", 4),
    ("und", 1),
    ("dürfte", 2),
    ("fürderhin", 3),
    ("zu", 1),
    ("Rüffeln", 3),
    ("in", 1),
    ("Hülle", 2),
    ("und", 1),
    ("Fülle", 2),
    ("führen", 2),
]
GERMAN = (
    "Die pünktlich gewünschte Trüffelfüllung im übergestülpten Würzkümmel-Würfel ist kümmerlich "
    "und dürfte fürderhin zu Rüffeln in Hülle und Fülle führen"
)


# --- estimate: worked examples ------------------------------------------------------------------


def test_english_sentence_is_11():
    assert estimate_token_count(ENGLISH) == 11


def test_german_sentence_matches_its_per_word_breakdown():
    assert [s for s in split_segments(GERMAN) if not s.isspace()] == [w for w, _ in GERMAN_WORDS]
    for word, cost in GERMAN_WORDS:
        assert estimate_token_count(word) == cost, word
    assert estimate_token_count(GERMAN) == 49


def test_german_without_language_configs_is_31():
    assert estimate_token_count(GERMAN, language_configs=[]) == 31


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"id":"usr_29f84h","plan":"pro","seats":12}', 17),
        ("https://example.com/path/to/resource", 13),
        ("1,000,000", 5),
        ("1234567890", 1),
        ("Hello世界", 7),
        ("こんにちは", 1),  # hiragana is not in the 1.3.0 CJK set
        ("你好世界你好世界", 8),
        ("𠀀𠀀", 1),  # astral ideographs are not detected either
        ("😀", 1),
        ("😀😀😀", 1),  # 6 UTF-16 units -> ceil(6/6)
        ("👨‍👩‍👧", 2),  # 8 UTF-16 units -> ceil(8/6)
        ("١٢٣٤٥٦٧", 2),  # not ASCII digits -> ceil(7/6)
        ("----", 2),
        (".....", 3),
        ("...", 1),
        ("don't", 1),
        ('"id"', 1),
        ("quotes”", 2),
        ("\ufeff\r\n", 0),
        ("", 0),
        ("   \t\n", 0),
    ],
)
def test_worked_examples(text, expected):
    assert estimate_token_count(text) == expected


def test_none_is_zero():
    assert estimate_token_count(None) == 0


def test_unicode_normalisation_matters():
    assert estimate_token_count(unicodedata.normalize("NFD", "élégante")) == 2  # ceil(10/6)
    assert estimate_token_count(unicodedata.normalize("NFC", "élégante")) == 3  # ceil(8/3)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("ÜBERALL", 3),  # German, upper case: ceil(7/3)
        ("GROẞE", 2),  # capital sharp s: ceil(5/3)
        ("ŒUVRES", 2),  # Romance: ceil(6/3)
        ("ÉLÉGANTE", 3),
        ("ŁAŃCUCHY", 3),  # Polish: ceil(8/3.5)
    ],
)
def test_upper_case_accents_match_like_javascript_i_flag(word, expected):
    assert estimate_token_count(word) == expected
    assert estimate_token_count(word, language_configs=[]) < expected


def _js_canonicalize(ch: str) -> str:
    """ECMAScript Canonicalize for a non-unicode /i pattern."""
    upper = ch.upper()
    if len(upper) != 1 or (ord(ch) >= 128 and ord(upper) < 128):
        return ch
    return upper


def test_default_classes_are_the_javascript_case_closure_of_the_1_3_0_classes():
    originals = ["äöüßẞ", "éèêëàâîïôûùüÿçœæáíóúñ", "ąćęłńóśźżěščřžýůúďťň"]
    bmp = [chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF]
    for source, config in zip(originals, DEFAULT_LANGUAGE_CONFIGS, strict=True):
        wanted = {_js_canonicalize(c) for c in source}
        closure = {c for c in bmp if _js_canonicalize(c) in wanted}
        matched = {c for c in bmp if config.pattern.search(c)}
        assert matched == closure
    assert [c.average_chars_per_token for c in DEFAULT_LANGUAGE_CONFIGS] == [3, 3, 3.5]


def test_first_matching_language_config_wins():
    # ü is in both the German and the Romance class: German (listed first) decides.
    assert (
        estimate_token_count(
            "über", language_configs=[LanguageConfig(re.compile("ü"), 1), LanguageConfig(re.compile("ü"), 4)]
        )
        == 4
    )


def test_custom_cjk_config_has_no_effect():
    config = LanguageConfig(re.compile("[\u4e00-\u9fff]"), 2)
    assert estimate_token_count("你好世界你好世界", language_configs=[config]) == 8


def test_custom_config_applies_only_after_the_short_word_rule():
    config = LanguageConfig(re.compile("x"), 1)
    assert estimate_token_count("xxxx", language_configs=[config]) == 4
    assert estimate_token_count("xxx", language_configs=[config]) == 1
    assert estimate_token_count("xxxx") == 1


def test_stateless_custom_pattern_matches_every_word():
    # JavaScript's /[éè]/g would give 11 (lastIndex quirk); a Python pattern behaves like /[éè]/.
    config = LanguageConfig(re.compile("[éè]"), 3)
    assert estimate_token_count("éléphant " * 4, language_configs=[config]) == 12


def test_default_chars_per_token_option():
    assert estimate_token_count("sentence", default_chars_per_token=4) == 2
    assert estimate_token_count("sentence", default_chars_per_token=8) == 1


@pytest.mark.parametrize("ratio", [0, -1])
def test_non_positive_ratio_is_rejected(ratio):
    with pytest.raises(ValueError, match="default_chars_per_token"):
        estimate_token_count("hello", default_chars_per_token=ratio)
    with pytest.raises(ValueError, match="average_chars_per_token"):
        LanguageConfig(re.compile("a"), ratio)


def test_language_config_needs_a_compiled_pattern():
    with pytest.raises(TypeError, match="re.Pattern"):
        LanguageConfig("[ä]", 3)  # type: ignore[arg-type]


def test_javascript_whitespace_set():
    # JS \s includes NBSP, U+3000 and the BOM, and excludes U+001C-001F and U+0085.
    for space in "\u00a0\u3000\ufeff\u2028\u202f":
        assert split_segments(f"ab{space}cd") == ["ab", space, "cd"]
    for not_space in "\x1c\x1f\x85":
        assert split_segments(f"ab{not_space}cd") == [f"ab{not_space}cd"]


def test_whitespace_and_punctuation_runs_stay_separate():
    assert split_segments("a, b") == ["a", ",", " ", "b"]
    assert split_segments("x.,;y") == ["x", ".,;", "y"]


def test_repeated_words_are_priced_like_single_words():
    text = " ".join(["pünktlich", "sentence", "ab", "1234", "----", "世界"] * 50)
    per_piece = sum(estimate_token_count(s) for s in split_segments(text))
    assert estimate_token_count(text) == per_piece == 50 * (3 + 2 + 1 + 1 + 2 + 2)


def test_is_within_token_limit():
    assert is_within_token_limit(ENGLISH, 11)
    assert not is_within_token_limit(ENGLISH, 10)
    assert is_within_token_limit(GERMAN, 31, language_configs=[])


# --- slice --------------------------------------------------------------------------------------


def test_slice_examples():
    assert slice_by_tokens(ENGLISH, 0, 2) == "Hello,"
    assert slice_by_tokens(ENGLISH, 2) == " world! This is a short sentence."
    assert slice_by_tokens(GERMAN, 0, 3) == "Die pünktl"
    assert slice_by_tokens(GERMAN, -3) == "lle führen"


def test_slice_negative_end_and_empty_windows():
    assert slice_by_tokens(ENGLISH, 0, -1) == "Hello, world! This is a short sentence"
    assert slice_by_tokens(ENGLISH, -1) == "."
    assert slice_by_tokens(ENGLISH, 5, 5) == ""
    assert slice_by_tokens(ENGLISH, 6, 2) == ""
    assert slice_by_tokens("", 0, 3) == ""
    assert slice_by_tokens(None) == ""


def test_slice_can_split_a_surrogate_pair_like_javascript():
    # "a😀😀" is 5 UTF-16 units and costs 1; 0.3 of it ends at unit ceil(1.5) = 2, mid-emoji.
    assert slice_by_tokens("a😀😀", 0, 0.3) == "a\ud83d"


# --- split --------------------------------------------------------------------------------------


def test_split_without_overlap():
    assert split_by_tokens("aaaa bbbb cccc dddd", 2) == ["aaaa bbbb", " cccc dddd"]


def test_split_overlap_only_trailing_chunk_quirk():
    assert split_by_tokens("aaaa bbbb cccc dddd", 2, overlap=1) == [
        "aaaa bbbb",
        "bbbb cccc",
        "cccc dddd",
        "dddd",
    ]


def test_split_unclamped_overlap_quirk():
    assert split_by_tokens("a b c d", 1, overlap=1) == ["a", "a ", "a b", "b ", "b c", "c ", "c d", "d"]


def test_split_never_cuts_a_segment():
    assert split_by_tokens("Trüffelfüllung ok", 2) == ["Trüffelfüllung", " ok"]


@pytest.mark.parametrize(("text", "size"), [("", 3), (None, 3), ("abc", 0), ("abc", -1)])
def test_split_degenerate_inputs(text, size):
    assert split_by_tokens(text, size) == []


# --- invariants ---------------------------------------------------------------------------------

_ALPHABET = st.sampled_from(
    list("abcXYZ09 \t\r\n'\"")
    + list(PUNCTUATION)
    + list(JS_WHITESPACE[:6])
    + list("äÄéÉłŁœß世界こんカ한\u3000\ufeff\x85\x1c😀👨\u200d١")
)
TEXT = st.text(alphabet=_ALPHABET, max_size=200)


def _reference_segments(text: str) -> list[str]:
    def kind(ch: str) -> int:
        return 0 if ch in JS_WHITESPACE else 1 if ch in PUNCTUATION else 2

    return ["".join(run) for _, run in itertools.groupby(text, key=kind)]


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_segments_are_maximal_runs_and_rejoin(text):
    segments = split_segments(text)
    assert "".join(segments) == text
    assert segments == _reference_segments(text)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_estimate_is_at_least_the_number_of_priced_segments(text):
    priced = [s for s in split_segments(text) if s[0] not in JS_WHITESPACE]
    assert estimate_token_count(text) >= len(priced)


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_full_slice_is_identity(text):
    assert slice_by_tokens(text, 0, None) == text


@settings(max_examples=200, deadline=None)
@given(TEXT, st.integers(min_value=1, max_value=8))
def test_split_without_overlap_rejoins(text, size):
    assert "".join(split_by_tokens(text, size)) == text


def test_one_megabyte_of_prose_counts_as_its_repeated_piece():
    # speed is benchmarks/bench_tokenx.py's job; here a long text must add up like its pieces
    piece = GERMAN + ". " + ENGLISH + " The observer keeps 1,234 notes; see https://x.io/a. "
    assert estimate_token_count(piece * 4000) == 4000 * estimate_token_count(piece)


def test_memoised_default_prices_stay_exact_when_the_memo_fills_up(monkeypatch):
    from omlab.tokens import tokenx

    monkeypatch.setattr(tokenx, "SEGMENT_MEMO_SIZE", 3)
    monkeypatch.setattr(tokenx, "_DEFAULT_PRICES", tokenx._SegmentPrices(tokenx._Pricer(6, None)))
    texts = [ENGLISH, "Die pünktliche Abfahrt 2024 ...", "東京タワー 😀 naïve café", ENGLISH, "a" * 50]
    # the explicit defaults take the unmemoised path: same prices, computed afresh every call
    expected = [estimate_token_count(text, language_configs=DEFAULT_LANGUAGE_CONFIGS) for text in texts]
    assert [estimate_token_count(text) for text in texts] == expected
    assert 0 < len(tokenx._DEFAULT_PRICES) <= 3
