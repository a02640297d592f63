"""Porter stemmer, behaving like NLTK's ``PorterStemmer()`` default (``NLTK_EXTENSIONS`` mode).

LoCoMo's official F1 stems every token with NLTK's Porter stemmer; nltk is not an omlab
dependency, so this is an independent implementation of the same algorithm (Porter 1980 plus the
extensions NLTK enables by default: the irregular-forms table, no stemming of words of <= 2
letters, ``ies``/``ied`` on 4-letter words -> ``ie``, the ``(*c and not c) Y -> I`` rule, ``alli``
handled first in step 2, ``fulli`` -> ``ful`` and ``logi`` -> ``log``). Input is lower-cased.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

_IRREGULAR: dict[str, str] = {
    "skies": "sky",
    "sky": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "news": "news",
    "innings": "inning",
    "inning": "inning",
    "outings": "outing",
    "outing": "outing",
    "cannings": "canning",
    "canning": "canning",
    "howe": "howe",
    "proceed": "proceed",
    "exceed": "exceed",
    "succeed": "succeed",
}
_VOWELS = frozenset("aeiou")

_Condition = Callable[[str], bool] | None
_Rule = tuple[str, str, _Condition]


def _is_consonant(word: str, i: int) -> bool:
    if word[i] in _VOWELS:
        return False
    if word[i] == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``[C](VC){m}[V]``."""
    pattern = "".join("c" if _is_consonant(stem, i) else "v" for i in range(len(stem)))
    return pattern.count("vc")


def _positive_measure(stem: str) -> bool:
    return _measure(stem) > 0


def _contains_vowel(stem: str) -> bool:
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _ends_double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _ends_cvc(word: str) -> bool:
    """Porter's ``*o`` (consonant-vowel-consonant, last not w/x/y), plus NLTK's 2-letter ``vc``."""
    if len(word) >= 3:
        return (
            _is_consonant(word, len(word) - 3)
            and not _is_consonant(word, len(word) - 2)
            and _is_consonant(word, len(word) - 1)
            and word[-1] not in "wxy"
        )
    return len(word) == 2 and not _is_consonant(word, 0) and _is_consonant(word, 1)


def _apply_first(word: str, rules: list[_Rule]) -> str:
    """Apply the first rule whose suffix matches; if its condition fails, stop (Porter's rule)."""
    for suffix, replacement, condition in rules:
        if suffix == "*d":
            if _ends_double_consonant(word):
                stem = word[:-2]
                return stem + replacement if condition is None or condition(stem) else word
            continue
        if word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
            return stem + replacement if condition is None or condition(stem) else word
    return word


def _step1a(word: str) -> str:
    if word.endswith("ies") and len(word) == 4:
        return word[:-3] + "ie"
    return _apply_first(word, [("sses", "ss", None), ("ies", "i", None), ("ss", "ss", None), ("s", "", None)])


def _step1b(word: str) -> str:
    if word.endswith("ied"):
        return word[:-3] + ("ie" if len(word) == 4 else "i")
    if word.endswith("eed"):
        stem = word[:-3]
        return stem + "ee" if _measure(stem) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _contains_vowel(word[: -len(suffix)]):
            stem = word[: -len(suffix)]
            break
    else:
        return word
    last = stem[-1]
    return _apply_first(
        stem,
        [
            ("at", "ate", None),
            ("bl", "ble", None),
            ("iz", "ize", None),
            ("*d", last, lambda _: last not in "lsz"),
            ("", "e", lambda s: _measure(s) == 1 and _ends_cvc(s)),
        ],
    )


def _step1c(word: str) -> str:
    return _apply_first(word, [("y", "i", lambda s: len(s) > 1 and _is_consonant(s, len(s) - 1))])


def _step2(word: str) -> str:
    if word.endswith("alli") and _positive_measure(word[:-4]):
        return _step2(word[:-4] + "al")
    rules: list[_Rule] = [
        (suffix, replacement, _positive_measure)
        for suffix, replacement in (
            ("ational", "ate"),
            ("tional", "tion"),
            ("enci", "ence"),
            ("anci", "ance"),
            ("izer", "ize"),
            ("bli", "ble"),
            ("alli", "al"),
            ("entli", "ent"),
            ("eli", "e"),
            ("ousli", "ous"),
            ("ization", "ize"),
            ("ation", "ate"),
            ("ator", "ate"),
            ("alism", "al"),
            ("iveness", "ive"),
            ("fulness", "ful"),
            ("ousness", "ous"),
            ("aliti", "al"),
            ("iviti", "ive"),
            ("biliti", "ble"),
            ("fulli", "ful"),
        )
    ]
    # The 'l' of 'logi' stays with the stem, so short stems like 'geo'/'theo' qualify.
    rules.append(("logi", "log", lambda _: _positive_measure(word[:-3])))
    return _apply_first(word, rules)


def _step3(word: str) -> str:
    return _apply_first(
        word,
        [
            (suffix, replacement, _positive_measure)
            for suffix, replacement in (
                ("icate", "ic"),
                ("ative", ""),
                ("alize", "al"),
                ("iciti", "ic"),
                ("ical", "ic"),
                ("ful", ""),
                ("ness", ""),
            )
        ],
    )


def _step4(word: str) -> str:
    def above_one(stem: str) -> bool:
        return _measure(stem) > 1

    rules: list[_Rule] = [
        (suffix, "", above_one)
        for suffix in ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent")
    ]
    rules.append(("ion", "", lambda s: _measure(s) > 1 and s[-1:] in ("s", "t")))
    rules += [(suffix, "", above_one) for suffix in ("ou", "ism", "ate", "iti", "ous", "ive", "ize")]
    return _apply_first(word, rules)


def _step5a(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        if _measure(stem) > 1 or (_measure(stem) == 1 and not _ends_cvc(stem)):
            return stem
    return word


def _step5b(word: str) -> str:
    return _apply_first(word, [("ll", "l", lambda _: _measure(word[:-1]) > 1)])


@lru_cache(maxsize=65536)
def porter_stem(word: str) -> str:
    """Stem one word the way ``nltk.stem.PorterStemmer().stem`` does (lower-cases first)."""
    stem = word.lower()
    if stem in _IRREGULAR:
        return _IRREGULAR[stem]
    if len(stem) <= 2:
        return stem
    for step in (_step1a, _step1b, _step1c, _step2, _step3, _step4, _step5a, _step5b):
        stem = step(stem)
    return stem
