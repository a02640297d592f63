"""LoCoMo's official QA protocol as a suite option: wording read from the user's copy of the
official file, category 2 hint, category 5 as two options mapped back, official captions, and the
official F1 aggregation, recorded in the run and named in the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omlab.bench.datasets.schema import Question
from omlab.bench.report.run_report import write_report
from omlab.bench.results import answers_df, metrics_df, runs_df, scores_df
from omlab.cli.main import main
from omlab.llm.offline import register_offline_model
from omlab.llm.offline.base import OfflineResult, message_text

ROOT = Path(__file__).resolve().parents[2]
LOCOMO_SAMPLE = ROOT / "datasets" / "samples" / "locomo_sample.json"

# Shaped like LoCoMo's task_eval/gpt_utils.py, with stand-in wording (the official text is never
# committed): what omlab reads from the user's copy is found by its place in the code.
STAND_IN_GPT_UTILS = '''
import random

QA_PROMPT = """
STAND-IN short answer prompt.

Question: {} Short answer:
"""

QA_PROMPT_CAT_5 = """
STAND-IN two-option prompt.

Question: {} Short answer:
"""

CONV_START_PROMPT = "STAND-IN conversation of {} and {}.\\n\\n"


def get_gpt_answers(in_data, out_data, prediction_key, args):
    questions = []
    for qa in in_data["qa"]:
        if qa['category'] == 2:
            questions.append(qa['question'] + ' STAND-IN date hint.')
        elif qa['category'] == 5:
            answer_text = qa.get('answer', qa.get('adversarial_answer'))
            question = qa['question'] + " STAND-IN pick one: (a) {} (b) {}. "
            if random.random() < 0.5:
                question = question.format('Not mentioned in the conversation', answer_text)
            else:
                question = question.format(answer_text, 'Not mentioned in the conversation')
            questions.append(question)
        else:
            questions.append(qa['question'])
'''

SEEN: list[str] = []


class _Recorder:
    """An offline actor that records the question it is asked and picks option (b) when offered."""

    name = "protocol-recorder"

    def generate(self, messages, *, max_output_tokens=None, temperature=None):
        text = message_text(messages[-1])
        SEEN.append(text)
        return OfflineResult("(b)" if "(a)" in text else "bread baking chess pottery", 10, 2)


register_offline_model("protocol-recorder", _Recorder)


def _official_file(folder: Path) -> Path:
    path = folder / "locomo" / "task_eval" / "gpt_utils.py"
    path.parent.mkdir(parents=True)
    path.write_text(STAND_IN_GPT_UTILS, encoding="utf-8")
    return path


def test_the_official_wording_is_read_from_the_users_file(tmp_path):
    from omlab.bench.scoring.locomo_protocol import locomo_protocol

    protocol = locomo_protocol(_official_file(tmp_path).parents[1])  # the checkout works too
    assert protocol.temporal_hint == " STAND-IN date hint."
    assert protocol.two_options == " STAND-IN pick one: (a) {} (b) {}. "
    assert protocol.not_mentioned == "Not mentioned in the conversation"
    assert protocol.answer_prompt == "\nSTAND-IN short answer prompt.\n\nQuestion: {} Short answer:\n"  # as written
    assert protocol.start("Iris", "Tomas") == "STAND-IN conversation of Iris and Tomas.\n\n"
    assert protocol.source.endswith("gpt_utils.py")
    temporal = Question("c:q2", "temporal", "When did she bake?", "May", category=2)
    assert protocol.ask(temporal) == (
        "\nSTAND-IN short answer prompt.\n\nQuestion: When did she bake? STAND-IN date hint. Short answer:\n",
        None,
    )


def test_category_5_is_two_options_in_a_fixed_order_mapped_back_like_get_cat_5_answer():
    from omlab.bench.scoring.locomo_protocol import OMLAB_WORDING

    orders = set()
    for index in range(20):
        question = Question(f"c:q{index}", "adversarial", "Where did Bo move?", "Not mentioned in the conversation")
        question = Question(**{**_fields(question), "category": 5, "adversarial_answer": "Porto"})
        text, options = OMLAB_WORDING.ask(question)
        assert OMLAB_WORDING.ask(question) == (text, options)  # reproducible
        assert set(options.values()) == {"Porto", "Not mentioned in the conversation"}
        assert f"(a) {options['a']} (b) {options['b']}" in text
        orders.add(options["a"])
        assert OMLAB_WORDING.answer_of(" B ", options) == options["b"]
        assert OMLAB_WORDING.answer_of("(a)", options) == options["a"]
        assert OMLAB_WORDING.answer_of("It is Not Mentioned.", options) == "it is not mentioned."
    assert orders == {"Porto", "Not mentioned in the conversation"}  # both orders occur


def _fields(question: Question) -> dict:
    return {name: getattr(question, name) for name in question.__slots__}


def test_official_captions_read_like_the_official_transcript():
    from omlab.bench.datasets import load_locomo

    _, (conversation,) = load_locomo(LOCOMO_SAMPLE, caption_style="official")
    assert conversation.turns_by_id()["D1:3"].content == (
        "Here's my first loaf! and shared a photo of a round loaf of bread on a board."
    )


@pytest.fixture(scope="module")
def official_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("protocol")
    _official_file(folder)
    (folder / "locomo.json").write_bytes(LOCOMO_SAMPLE.read_bytes())
    suite = folder / "locomo_official.toml"
    suite.write_text(
        """
[suite]
name = "locomo-official"
[dataset]
kind = "locomo"
path = "locomo.json"
[engine]
observation = { messageTokens = 1000, bufferTokens = false }
reflection = { observationTokens = 2000 }
[models]
actor = "omlab/protocol-recorder"
[latency]
default = { kind = "fixed", seconds = 1 }
[scoring]
protocol = "official"
official_files = "locomo"
[run]
workers = 1
""",
        encoding="utf-8",
    )
    results = folder / "results"
    SEEN.clear()
    assert main(["run", str(suite), "--results", str(results), "--quiet", "--no-prepared"]) == 0
    (run_id,) = runs_df(results)["run_id"]
    return results, run_id, list(SEEN)


def test_an_official_run_asks_as_the_official_pipeline(official_run):
    results, run_id, seen = official_run
    assert all(text.startswith("STAND-IN conversation of Iris and Tomas.\n\n") for text in seen)
    assert any("When" in text and text.endswith("STAND-IN date hint. Short answer:\n") for text in seen)
    (two_option,) = [text for text in seen if "(a)" in text]
    assert "\n\n\nSTAND-IN two-option prompt." in two_option and "Porto" in two_option
    answers = answers_df(results, run_id).set_index("category")
    chosen = answers.loc[5, "hypothesis"]  # the recorder said "(b)": mapped back to option (b)
    assert chosen == two_option.split("(b) ")[1].rsplit(".", 1)[0]


def test_an_official_run_is_recorded_and_named_with_its_aggregation(official_run):
    results, run_id, _ = official_run
    config = json.loads(runs_df(results)["config_json"].iloc[0])
    assert config["scoring"]["protocol"] == "official"
    assert config["scoring"]["f1_aggregation"] == "official"
    assert config["scoring"]["protocol_wording"]["source"].endswith("gpt_utils.py")
    f1 = scores_df(results, run_id, scorers="f1")["value"]
    metrics = metrics_df(results, run_id).set_index(["name", "group_key"])["value"]
    assert metrics[("f1", "all")] == pytest.approx(sum(round(v, 3) for v in f1) / len(f1), abs=1e-15)
    assert metrics[("f1", "all")] != pytest.approx(f1.mean(), abs=1e-6)  # the rounding shows
    report = write_report(results, run_id).read_text(encoding="utf-8")
    assert "| QA protocol | official (wording from " in report
    assert "F1 aggregation: official (per-question F1 rounded to 3 decimals, then averaged)" in report


def test_the_official_aggregation_rounds_each_f1_before_averaging():
    from omlab.bench.scoring.locomo_protocol import aggregate_f1_values

    values = [0.66666666, 0.12345, 1 / 3]
    assert aggregate_f1_values(values, "official") == [0.667, 0.123, 0.333]
    assert aggregate_f1_values(values, "mean") == values
    with pytest.raises(ValueError, match="official or mean"):
        aggregate_f1_values(values, "median")


def test_a_wrong_official_file_is_refused_at_suite_load(tmp_path, capsys):
    (tmp_path / "locomo.json").write_bytes(LOCOMO_SAMPLE.read_bytes())
    (tmp_path / "not_it.py").write_text("print('hello')\n", encoding="utf-8")
    suite = tmp_path / "s.toml"
    suite.write_text(
        '[suite]\nname = "x"\n[dataset]\nkind = "locomo"\npath = "locomo.json"\n'
        '[scoring]\nprotocol = "official"\nofficial_files = "not_it.py"\n',
        encoding="utf-8",
    )
    assert main(["run", str(suite), "--results", str(tmp_path / "r"), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert "scoring.official_files" in error and "QA_PROMPT" in error
