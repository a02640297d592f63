"""``get_resolved_config()``, the reference's ``getResolvedConfig()`` (issue 20 item 8)."""

from __future__ import annotations

from omlab import ModelByInputTokens, ObservationalMemory


async def test_a_router_resolves_to_its_smallest_tier_model_id_with_the_routing_table():
    router = ModelByInputTokens(upTo={40_000: "openai/gpt-4o", 10_000: "openai/gpt-4o-mini"})
    om = ObservationalMemory(
        {
            "observation": {"model": router, "messageTokens": 20_000},
            "reflection": {"model": "google/gemini-2.5-flash", "observationTokens": 50_000},
        }
    )
    resolved = await om.get_resolved_config()
    assert resolved == {
        "scope": "thread",
        "observation": {
            "messageTokens": 20_000,
            "model": "openai/gpt-4o-mini",
            "previousObserverTokens": 2_000,
            "routing": [{"upTo": 10_000, "model": "openai/gpt-4o-mini"}, {"upTo": 40_000, "model": "openai/gpt-4o"}],
        },
        "reflection": {"observationTokens": 50_000, "model": "google/gemini-2.5-flash"},
    }


async def test_fallbacks_and_callables_resolve_to_a_model_id():
    def by_tenant(context):
        return "anthropic/claude-sonnet-4-5" if context.get("tenant") == "a" else "openai/gpt-4o"

    om = ObservationalMemory(
        {
            "observation": {"model": [{"model": "openai/gpt-4o-mini", "enabled": False}, "groq/llama-3.3-70b"]},
            "reflection": {"model": by_tenant},
        }
    )
    resolved = await om.get_resolved_config({"tenant": "a"})
    assert resolved["observation"]["model"] == "groq/llama-3.3-70b"
    assert "routing" not in resolved["observation"]
    assert resolved["reflection"]["model"] == "anthropic/claude-sonnet-4-5"


async def test_a_model_that_cannot_be_resolved_reads_unknown():
    def broken(context):
        raise RuntimeError("no tenant")

    om = ObservationalMemory({"model": broken})
    resolved = await om.get_resolved_config()
    assert resolved["observation"]["model"] == resolved["reflection"]["model"] == "(unknown)"
