"""The offline reader's and judge's text normaliser: words, stems, numbers and dates.

:func:`normalise_tokens`, :func:`stem` and :func:`content_terms` are shared by ``omlab/reader``
and ``omlab/judge`` (``omlab.llm`` must not import the benchmark's scorers).
"""

from __future__ import annotations

import functools
import re
from datetime import date

# --- the normaliser -----------------------------------------------------------------------------

_STOPWORD_TEXT = """
a an the and or but if of at by for with about to from in on off into onto over under up down out
is am are was were be been being have has had having do does did doing done will would shall should
can could may might must i me my mine myself we us our ours you your yours he him his she her hers
it its they them their theirs this that these those there here what which who whom whose when where
why how all any both each few more most other some such no nor not only own same so than too very
just also as then once again s t d ll m re ve im ive id youre dont didnt doesnt isnt wasnt
user users assistant stated said says tell told remind remember mentioned mention know
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())
# Words that frame a question ("how many … ago") rather than name what it is about.
_FRAME_TEXT = (
    "many much long often ago ever exactly approximately roughly total number kind type sort please "
    "go goes went gone get got take took taken"
)
QUESTION_FRAME_WORDS: frozenset[str] = frozenset(_FRAME_TEXT.split())
# A few common irregular verbs, so that "ran" meets "run" and "bought" meets "buy".
_IRREGULAR = {
    "ran": "run", "went": "go", "gone": "go", "bought": "buy", "got": "get", "gotten": "get",
    "took": "take", "taken": "take", "made": "make", "met": "meet", "saw": "see", "seen": "see",
    "gave": "give", "given": "give", "paid": "pay", "felt": "feel", "left": "leave", "found": "find",
    "spent": "spend", "sold": "sell", "thought": "think", "brought": "bring", "began": "begin",
    "begun": "begin", "ate": "eat", "eaten": "eat", "wrote": "write", "written": "write", "drove": "drive",
    "driven": "drive", "flew": "fly", "flown": "fly", "won": "win", "lost": "lose", "kept": "keep",
    "built": "build", "taught": "teach", "caught": "catch", "sent": "send", "swam": "swim", "sang": "sing",
    "chose": "choose", "chosen": "choose", "grew": "grow", "grown": "grow", "knew": "know", "wore": "wear",
    "children": "child", "people": "person", "women": "woman", "men": "man", "feet": "foot",
}  # fmt: skip

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")  # fmt: skip
_MONTH_BY_PREFIX = {m[:3]: i + 1 for i, m in enumerate(MONTHS)} | {"sept": 9}
_MONTH_ABBREVIATIONS = {m[:3]: m for m in MONTHS} | {"sept": "september"}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_TOKEN_RE = re.compile(
    r"[0-9]+(?:,[0-9]{3})+(?:\.[0-9]+)?(?![0-9])|[0-9]+(?:\.[0-9]+)?(?:st|nd|rd|th)?|[^\W0-9_]+(?:['’][^\W0-9_]+)*"
)
_COMPOUND_NUMBER_RE = re.compile(r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ](one|two|three|"
                                 r"four|five|six|seven|eight|nine)\b", re.IGNORECASE)  # fmt: skip


def normalise_tokens(text: str) -> list[str]:
    """Case-folded words and numbers: ``"$1,200"`` → ``1200``, ``"3rd"`` → ``3``, ``"three"`` → ``3``,
    ``"twenty-five"`` → ``25``, ``"Nov"`` → ``november``, ``"don't"`` → ``dont``."""
    return list(_normalised(text))


@functools.lru_cache(maxsize=65_536)
def _normalised(text: str) -> tuple[str, ...]:
    # memoised: every question of a conversation scans the same memory lines
    text = _COMPOUND_NUMBER_RE.sub(
        lambda m: str(NUMBER_WORDS[m.group(1).lower()] + NUMBER_WORDS[m.group(2).lower()]), text
    )
    tokens: list[str] = []
    for raw in _TOKEN_RE.findall(text.casefold()):
        if raw[0] in _ASCII_DIGITS:
            tokens.append(_number_text(raw))
            continue
        word = raw.replace("'", "").replace("’", "")
        if word in NUMBER_WORDS:
            tokens.append(str(NUMBER_WORDS[word]))
        else:
            tokens.append(_MONTH_ABBREVIATIONS.get(word, word))
    return tuple(tokens)


_ASCII_DIGITS = frozenset("0123456789")


def _number_text(raw: str) -> str:
    digits = re.sub(r"(st|nd|rd|th)$", "", raw).replace(",", "")
    value = float(digits)
    return str(int(value)) if value.is_integer() else str(value)


def is_number(token: str) -> bool:
    """Whether a token from :func:`normalise_tokens` is a number."""
    return bool(token) and token[0] in _ASCII_DIGITS


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A tiny suffix stripper (plurals, -ed, -ing, final e/y, doubled consonants), so that
    ``kids``/``kid``, ``moved``/``move``/``moving`` and ``cities``/``city`` meet."""
    if word in _IRREGULAR:
        word = _IRREGULAR[word]
    if len(word) <= 3 or not word.isalpha():
        return word
    w = word
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies"):
        w = w[:-3] + "i"
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ingly", "edly", "ing", "ed"):
        stem_part = w[: -len(suffix)]
        if w.endswith(suffix) and len(stem_part) >= 3 and any(c in "aeiouy" for c in stem_part):
            w = stem_part
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 2 and w.endswith("y") and w[-2] not in "aeiou":
        w = w[:-1] + "i"
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz" and w[-1].isalpha():
        w = w[:-1]
    return w


def content_terms(text: str) -> list[str]:
    """Stemmed tokens without stop-words, in order (all tokens when only stop-words are left)."""
    tokens = normalise_tokens(text)
    kept = [t for t in tokens if t not in STOPWORDS] or tokens
    return [stem(t) for t in kept]


# --- dates ----------------------------------------------------------------------------------------

_MONTH_RE = (
    r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATE_PATTERNS = (
    re.compile(rf"\b{_MONTH_RE}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year>\d{{4}})\b", re.IGNORECASE),
    re.compile(
        rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_RE},?\s+(?P<year>\d{{4}})\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?P<year>\d{4})[/-](?P<num>\d{1,2})[/-](?P<day>\d{1,2})\b"),
)
MONTH_DAY_RE = re.compile(rf"\b{_MONTH_RE}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b(?!,?\s*\d{{4}})", re.IGNORECASE)


def parse_date(text: str) -> date | None:
    """The first full date in ``text``: ``May 8, 2023``, ``8 May 2023``, ``2023/05/30 (Tue) 23:40``,
    ``1:56 pm on 8 May, 2023``, ``2023-05-30``; None when there is none."""
    found = find_dates(text)
    return found[0][1] if found else None


def find_dates(text: str) -> list[tuple[re.Match[str], date]]:
    out: list[tuple[re.Match[str], date]] = []
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            groups = match.groupdict()
            month = int(groups["num"]) if groups.get("num") else _MONTH_BY_PREFIX[groups["mon"][:3].lower()]
            try:
                out.append((match, date(int(groups["year"]), month, int(groups["day"]))))
            except ValueError:
                continue
    return sorted(out, key=lambda pair: pair[0].start())


def format_date(day: date) -> str:
    """``May 7, 2023``."""
    return f"{MONTHS[day.month - 1].capitalize()} {day.day}, {day.year}"
