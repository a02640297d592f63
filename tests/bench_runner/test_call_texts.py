"""Every model call of a run keeps its prompt and its response (call_texts), without credentials."""

from __future__ import annotations

import json

import pytest

from omlab.bench.results import RunWriter, answers_df, calls_df, runs_df
from omlab.bench.results.browse import call_text
from omlab.cli.main import main
from omlab.viz.site.views import call_view

from .suites import write_suite


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("texts")
    suite = write_suite(folder, seeds="[11]")
    out = folder / "results"
    assert main(["run", str(suite), "--results", str(out), "--workers", "1", "--quiet"]) == 0
    return out


def test_each_call_of_a_run_has_its_prompt_and_response(results):
    (run_id,) = runs_df(results)["run_id"]
    calls = calls_df(results, run_id)
    assert {"observer", "actor", "judge"} <= set(calls["role"])
    for call in calls.itertuples():
        prompt, response = call_text(results, run_id, call.call_id)
        assert prompt and all(message["content"] for message in prompt), call.role
        assert isinstance(response, str), call.role
    answers = answers_df(results, run_id)
    actor = calls[calls["role"] == "actor"].iloc[0]
    question = answers[answers["question_id"] == actor["question_id"]].iloc[0]
    prompt, _ = call_text(results, run_id, actor["call_id"])
    assert question["question"] in json.dumps(prompt, ensure_ascii=False)


def test_the_call_page_shows_the_prompt_and_the_response(results):
    (run_id,) = runs_df(results)["run_id"]
    call = calls_df(results, run_id, roles="observer").iloc[0]
    page = call_view(results, run_id, call["call_id"])
    assert 'class="text prompt"' in page and 'id="response"' in page and 'id="no-prompt"' not in page


def test_key_shaped_text_in_a_prompt_or_a_response_is_redacted(tmp_path):
    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0"
    with RunWriter(tmp_path, "r1", provenance={"git_commit": None}) as writer:
        writer.add_together(
            [
                ("model_calls", [{"conversation_id": "c", "call_id": "k", "role": "actor"}]),
                (
                    "call_texts",
                    [
                        {
                            "conversation_id": "c",
                            "call_id": "k",
                            "prompt": [{"role": "user", "content": f"my key is {key}", "api_key": key}],
                            "response": f"echo {key}",
                        }
                    ],
                ),
            ]
        )
    prompt, response = call_text(tmp_path, "r1", "k")
    assert key not in json.dumps(prompt) and key not in response
    assert prompt == [{"role": "user", "content": "my key is [redacted]"}] and response == "echo [redacted]"
