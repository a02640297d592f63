"""Search indexes for the ``recall`` tool's ``search`` mode: a keyword BM25 index and an
embedding index, both behind the :class:`SearchIndex` protocol (om-reference §8)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from omlab.engine.messages import Message
from omlab.engine.temporal_markers import is_temporal_marker
from omlab.engine.transcript import as_text


class SearchIndex(Protocol):
    """What ``mode: "search"`` needs: messages in, ranked ``(message_id, thread_id, score)`` out."""

    def index(self, messages: Iterable[Message]) -> None: ...

    def search(self, query: str, k: int, resource_id: str | None = None) -> list[tuple[str, str, float]]: ...


def searchable_text(message: Message) -> str:
    """The words of a message worth finding: text, reasoning, tool names, arguments and results,
    attachment names. Data parts and temporal markers give nothing."""
    if is_temporal_marker(message):
        return ""
    pieces: list[str] = []
    for part in message.visible_parts():
        if part.type in ("text", "reasoning") and part.text:
            pieces.append(part.text)
        elif part.type == "tool-invocation":
            pieces.append(part.tool_name or "")
            if part.args is not None:
                pieces.append(as_text(part.args))
            if part.result is not None:
                pieces.append(as_text(part.result))
            if part.error_text:
                pieces.append(part.error_text)
        elif part.type in ("image", "file"):
            pieces.append(part.filename or "")
    return "\n".join(p for p in pieces if p)


_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) > 1 or w.isdigit()]


@dataclass(slots=True)
class _Doc:
    thread_id: str
    resource_id: str | None
    terms: Counter[str]
    length: int


class KeywordSearchIndex:
    """A small in-process BM25 index over messages (``k1`` 1.2, ``b`` 0.75); no dependencies.

    Re-indexing a message id replaces it. Scores are BM25 sums; ties are broken by message id.
    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._docs: dict[str, _Doc] = {}
        self._df: Counter[str] = Counter()
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._docs)

    def index(self, messages: Iterable[Message]) -> None:
        """Add (or replace) messages; those without searchable text are dropped."""
        for message in messages:
            self.remove([message.id])
            terms = Counter(_terms(searchable_text(message)))
            if not terms or message.thread_id is None:
                continue
            doc = _Doc(message.thread_id, message.resource_id, terms, sum(terms.values()))
            self._docs[message.id] = doc
            self._df.update(terms.keys())
            self._total_length += doc.length

    def remove(self, message_ids: Iterable[str]) -> None:
        """Forget these messages (unknown ids are ignored)."""
        for message_id in message_ids:
            doc = self._docs.pop(message_id, None)
            if doc is None:
                continue
            self._df.subtract(doc.terms.keys())
            self._total_length -= doc.length

    def search(self, query: str, k: int, resource_id: str | None = None) -> list[tuple[str, str, float]]:
        """The ``k`` best ``(message_id, thread_id, score)`` for ``query`` (score > 0 only),
        restricted to ``resource_id`` when given."""
        query_terms = set(_terms(query))
        if not query_terms or not self._docs or k <= 0:
            return []
        count = len(self._docs)
        average = self._total_length / count
        idf = {
            t: math.log(1 + (count - self._df[t] + 0.5) / (self._df[t] + 0.5)) for t in query_terms if self._df[t] > 0
        }
        scored: list[tuple[str, str, float]] = []
        for message_id, doc in self._docs.items():
            if resource_id is not None and doc.resource_id != resource_id:
                continue
            score = 0.0
            norm = self.k1 * (1 - self.b + self.b * doc.length / average)
            for term, weight in idf.items():
                tf = doc.terms.get(term, 0)
                if tf:
                    score += weight * tf * (self.k1 + 1) / (tf + norm)
            if score > 0:
                scored.append((message_id, doc.thread_id, score))
        scored.sort(key=lambda hit: (-hit[2], hit[0]))
        return scored[:k]


class EmbeddingSearchIndex:
    """Semantic search by cosine similarity of embeddings.

    ``embed`` maps a list of texts to one vector each (e.g. a litellm embedding model wrapped by
    the caller). Vectors are kept normalised in a numpy matrix.
    """

    def __init__(self, embed: Callable[[list[str]], Sequence[Sequence[float]]], *, batch_size: int = 64) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.embed = embed
        self.batch_size = batch_size
        self._ids: list[str] = []
        self._meta: dict[str, tuple[str, str | None]] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._matrix: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self._vectors)

    def _embed(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self.embed(texts), dtype=np.float64)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(f"the embedder returned shape {vectors.shape} for {len(texts)} texts")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)

    def index(self, messages: Iterable[Message]) -> None:
        """Embed and add (or replace) messages; those without searchable text are dropped."""
        batch = [(m, searchable_text(m)) for m in messages if m.thread_id is not None]
        batch = [(m, text) for m, text in batch if text.strip()]
        for start in range(0, len(batch), self.batch_size):
            chunk = batch[start : start + self.batch_size]
            vectors = self._embed([text for _, text in chunk])
            for (message, _), vector in zip(chunk, vectors, strict=True):
                if self._vectors and vector.shape != next(iter(self._vectors.values())).shape:
                    raise ValueError(
                        f"embedding size changed: {vector.shape[0]} after {next(iter(self._vectors.values())).shape[0]}"
                    )
                self._vectors[message.id] = vector
                self._meta[message.id] = (message.thread_id, message.resource_id)  # type: ignore[assignment]
        self._matrix = None

    def remove(self, message_ids: Iterable[str]) -> None:
        """Forget these messages (unknown ids are ignored)."""
        for message_id in message_ids:
            self._vectors.pop(message_id, None)
            self._meta.pop(message_id, None)
        self._matrix = None

    def search(self, query: str, k: int, resource_id: str | None = None) -> list[tuple[str, str, float]]:
        """The ``k`` most similar ``(message_id, thread_id, cosine)``, best first."""
        if not query.strip() or not self._vectors or k <= 0:
            return []
        if self._matrix is None:
            self._ids = list(self._vectors)
            self._matrix = np.stack([self._vectors[i] for i in self._ids])
        query_vector = self._embed([query])[0]
        scores = self._matrix @ query_vector
        order = sorted(range(len(self._ids)), key=lambda i: (-scores[i], self._ids[i]))
        hits: list[tuple[str, str, float]] = []
        for i in order:
            thread_id, owner = self._meta[self._ids[i]]
            if resource_id is not None and owner != resource_id:
                continue
            hits.append((self._ids[i], thread_id, float(scores[i])))
            if len(hits) == k:
                break
        return hits


__all__ = ["EmbeddingSearchIndex", "KeywordSearchIndex", "SearchIndex", "searchable_text"]
