"""The offline Observer/Reflector sized by a profile write about as many tokens as it says."""

from __future__ import annotations

import pytest

from omlab.llm.offline import get_offline_model
from omlab.llm.offline.reflector import parse_reflector_request
from omlab.llm.offline.sizing import OutputSizing, SizingError, sized_generate
from omlab.tokens.tokenx import estimate_token_count
from tests.llm_offline.synthetic_chat import observer_message, synthetic_history


def _observer_messages() -> list[dict]:
    return [{"role": "user", "content": observer_message(synthetic_history(3, days=2, exchanges_per_day=4))}]


def _observation_tokens(text: str) -> int:
    """Tokens of the text inside ``<observations>`` (what the engine keeps in the log)."""
    start, end = text.index("<observations>") + len("<observations>"), text.rindex("</observations>")
    return estimate_token_count(text[start:end].strip("\n"))


@pytest.mark.parametrize("scale", [0.3, 0.6, 1.6])
def test_observer_output_follows_the_profile(scale):
    messages = _observer_messages()
    natural = _observation_tokens(get_offline_model("observer").generate(messages).text)
    content = 2000
    target = round(natural * scale)
    sizing = OutputSizing((content,), (content / target,))
    result = sized_generate("observer", messages, sizing, content)
    assert result.output_tokens == estimate_token_count(result.text)
    assert _observation_tokens(result.text) == pytest.approx(target, rel=0.1)
    assert result.text.startswith("<observations>") and "<current-task>" in result.text  # hints kept


@pytest.mark.parametrize("overhead", [0, 14, 30, 1000])
def test_observer_hints_are_clipped_to_the_fitted_overhead(overhead):
    messages = _observer_messages()
    natural = get_offline_model("observer").generate(messages).text
    sizing = OutputSizing((2000,), (2000 / _observation_tokens(natural),), overhead_tokens=overhead)
    result = sized_generate("observer", messages, sizing, 2000)
    extra = result.output_tokens - _observation_tokens(result.text)
    if overhead >= natural_extra(natural):
        assert result.text.endswith(natural[natural.rindex("</observations>") :])  # nothing to clip
    else:
        assert extra <= max(overhead, estimate_token_count("<observations>\n\n</observations>"))
        assert "<suggested-response>" not in result.text
    assert result.text.startswith("<observations>") and "</observations>" in result.text


def natural_extra(text: str) -> int:
    return estimate_token_count(text) - _observation_tokens(text)


def test_observer_that_cannot_grow_further_copies_the_whole_history_and_stops():
    messages = _observer_messages()
    result = sized_generate("observer", messages, OutputSizing((10,), (0.0001,)), 10)
    history_tokens = estimate_token_count(messages[0]["content"])
    assert result.output_tokens < 2 * history_tokens  # bounded by the request: nothing is invented


def test_reflector_output_follows_the_profile_not_the_prompt_target():
    observations = get_offline_model("observer").generate(_observer_messages()).text
    prompt = f"## OBSERVATIONS TO REFLECT ON\n{observations}\n---\n\nKeep the whole output under 10 tokens."
    messages = [{"role": "user", "content": prompt}]
    content = estimate_token_count(parse_reflector_request(prompt).observations)
    result = sized_generate("reflector", messages, OutputSizing((content,), (2.0,)), content)
    assert _observation_tokens(result.text) == pytest.approx(content / 2, rel=0.1)
    assert _observation_tokens(result.text) <= content / 2


def test_sizing_interpolates_and_refuses_bad_curves():
    sizing = OutputSizing((100, 300), (2.0, 4.0))
    assert sizing.ratio(50) == 2.0 and sizing.ratio(200) == 3.0 and sizing.ratio(900) == 4.0
    assert sizing.output_tokens(200) == 67
    with pytest.raises(SizingError, match="ascending"):
        OutputSizing((300, 100), (2.0, 4.0))
    with pytest.raises(SizingError, match="omlab/observer or omlab/reflector"):
        sized_generate("reader", [{"role": "user", "content": "x"}], sizing, 10)
