"""Throughput of the tokenx port against exact tiktoken o200k counting.

Run: ``.venv/bin/python benchmarks/bench_tokenx.py [--megabytes 5] [--seed 7]``.
Prints MB/s and tokens/s for both counters over the same generated English-like prose, and the
ratio of the estimate to the exact count.
"""

from __future__ import annotations

import argparse
import random
import time

from omlab.tokens.tiktoken_count import count_tiktoken, load_encoding
from omlab.tokens.tokenx import estimate_token_count

_COMMON_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "I",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "they",
    "you",
    "were",
    "her",
    "she",
    "there",
    "been",
    "one",
    "all",
    "we",
    "their",
    "has",
    "would",
    "when",
    "if",
    "so",
    "no",
    "will",
    "more",
    "about",
    "can",
    "said",
    "them",
    "some",
    "could",
    "time",
    "these",
    "two",
    "may",
    "then",
    "do",
    "first",
    "any",
    "my",
    "now",
    "such",
    "like",
    "our",
    "over",
    "man",
    "me",
    "even",
    "most",
    "made",
    "after",
    "also",
    "did",
    "many",
    "before",
    "must",
    "through",
    "years",
    "where",
    "much",
    "your",
    "way",
    "well",
    "down",
    "should",
    "because",
    "each",
    "just",
    "those",
    "people",
    "how",
    "too",
    "little",
    "state",
    "good",
    "very",
    "make",
    "world",
    "still",
    "own",
    "see",
    "men",
    "work",
    "long",
    "get",
    "here",
    "between",
    "both",
    "life",
    "being",
    "under",
    "never",
    "day",
    "same",
    "another",
    "know",
    "while",
    "last",
    "might",
    "us",
    "great",
    "old",
    "year",
    "off",
    "come",
    "since",
    "against",
    "go",
    "came",
    "right",
    "used",
    "take",
    "three",
    "memory",
    "observation",
    "conversation",
    "assistant",
    "message",
    "reflection",
    "window",
    "context",
    "threshold",
    "buffer",
]


_SYLLABLES = [
    "con",
    "ter",
    "ing",
    "tion",
    "ment",
    "able",
    "pre",
    "re",
    "de",
    "in",
    "un",
    "ex",
    "pro",
    "com",
    "per",
    "sta",
    "ble",
    "ly",
    "al",
    "er",
    "est",
    "ous",
    "ive",
    "ize",
    "ful",
    "less",
    "ness",
    "ward",
    "form",
    "port",
    "struct",
    "graph",
    "log",
    "phon",
    "scope",
    "tract",
    "vers",
    "mit",
    "duct",
    "spect",
    "press",
]


def generate_prose(megabytes: float, seed: int) -> str:
    """Seeded English-like prose: Zipf-weighted common words, some rare invented words, numbers,
    punctuation, sentences and paragraphs."""
    rng = random.Random(seed)
    # Rarer words built from English syllables, so a BPE vocabulary treats them like real words.
    rare_words = ["".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4))) for _ in range(20_000)]
    weights = [1 / (rank + 1) for rank in range(len(_COMMON_WORDS))]
    target = int(megabytes * 1_000_000)
    paragraphs: list[str] = []
    size = 0
    while size < target:
        sentences = []
        for _ in range(rng.randint(3, 8)):
            words = []
            for _ in range(rng.randint(6, 24)):
                roll = rng.random()
                if roll < 0.78:
                    words.append(rng.choices(_COMMON_WORDS, weights)[0])
                elif roll < 0.97:
                    words.append(rng.choice(rare_words))
                else:
                    words.append(str(rng.randint(0, 100_000)))
                if rng.random() < 0.06:
                    words[-1] += rng.choice(",;:")
            sentence = " ".join(words)
            sentences.append(sentence[0].upper() + sentence[1:] + rng.choice("..!?"))
        paragraph = " ".join(sentences)
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)


def _time(count, text: str) -> tuple[int, float]:
    started = time.perf_counter()
    tokens = count(text)
    return tokens, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    text = generate_prose(args.megabytes, args.seed)
    megabytes = len(text.encode("utf-8")) / 1_000_000
    load_encoding("o200k_base")  # load outside the timed region

    estimate, estimate_seconds = _time(estimate_token_count, text)
    exact, exact_seconds = _time(count_tiktoken, text)

    print(f"text: {megabytes:.2f} MB of generated prose (seed {args.seed})")
    for name, tokens, seconds in (
        ("tokenx 1.3.0 port", estimate, estimate_seconds),
        ("tiktoken o200k_base", exact, exact_seconds),
    ):
        print(
            f"{name:20s} {tokens:>10,d} tokens  {seconds:7.3f} s  "
            f"{megabytes / seconds:7.2f} MB/s  {tokens / seconds:>12,.0f} tokens/s"
        )
    print(f"estimate / exact = {estimate / exact:.3f}   speed-up = {exact_seconds / estimate_seconds:.1f}x")


if __name__ == "__main__":
    main()
