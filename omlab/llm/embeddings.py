"""Embedders for semantic recall (``retrieval: {vector: true}``): any litellm embedding model."""

from __future__ import annotations

from collections.abc import Callable

from omlab.llm.env import prepare_environment
from omlab.llm.spec import litellm_model_name, validate_model_string

Embedder = Callable[[list[str]], list[list[float]]]


def litellm_embedder(model: str, **settings: object) -> Embedder:
    """A function embedding a batch of texts with ``model`` (``provider/model``) through litellm.

    ``settings`` go to ``litellm.embedding`` (e.g. ``api_base``); keys come from the environment
    as litellm reads them and are never stored by omlab."""
    validate_model_string(model)

    def embed(texts: list[str]) -> list[list[float]]:
        prepare_environment()
        import litellm  # the model layer is the only place that imports litellm

        response = litellm.embedding(model=litellm_model_name(model), input=list(texts), **settings)
        return [list(item["embedding"]) for item in response.data]

    return embed
