"""LoCoMo's speakers keep their names under ``protocol = "official"``: the replayed messages carry
them (``Message.name``), the Observer's history is labelled with them, the actor's context names
who said what, and the report says which was used. Without the official protocol the speakers
stay ``user`` and ``assistant``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from omlab.bench.datasets import load_locomo
from omlab.bench.report.run_report import write_report
from omlab.bench.results import runs_df
from omlab.bench.run.replay import conversation_messages
from omlab.bench.scoring.locomo_protocol import context_text
from omlab.cli.main import main
from omlab.engine.context import message_to_chat
from omlab.engine.messages import Message
from omlab.engine.transcript import format_history
from omlab.llm.offline import get_offline_model, register_offline_model
from omlab.llm.offline.base import OfflineResult, message_text
from omlab.storage.serialize import message_from_dict, message_to_dict

ROOT = Path(__file__).resolve().parents[2]
LOCOMO_SAMPLE = ROOT / "datasets" / "samples" / "locomo_sample.json"
AT = datetime(2023, 3, 3, 18, 10, tzinfo=UTC)

OBSERVED: list[str] = []
ASKED: list[list[dict]] = []


class _NamesObserver:
    """The offline observer, recording the history it is given."""

    name = "names-observer"

    def generate(self, messages, **options):
        OBSERVED.append("\n".join(message_text(m) for m in messages))
        return get_offline_model("observer").generate(messages, **options)


class _NamesActor:
    """An actor that records its messages."""

    name = "names-actor"

    def generate(self, messages, **_):
        ASKED.append([dict(m) for m in messages])
        return OfflineResult("(a)" if "(a)" in message_text(messages[-1]) else "chess", 10, 2)


register_offline_model(_NamesObserver.name, _NamesObserver)
register_offline_model(_NamesActor.name, _NamesActor)


def test_a_named_message_is_labelled_by_its_speaker_in_the_observers_history():
    named = Message.of("user", "I started a baking course.", AT, name="Iris")
    plain = Message.of("assistant", "Nice!", AT)
    assert format_history([named, plain]) == "Mar 3 2023:\nIris (6:10 PM): I started a baking course.\nAssistant: Nice!"


def test_the_chat_message_carries_the_name_and_storage_keeps_it():
    named = Message.of("user", "Hi Tomas!", AT, id="m1", name="Iris")
    assert message_to_chat(named) == {"role": "user", "content": "Hi Tomas!", "name": "Iris"}
    assert "name" not in message_to_chat(Message.of("user", "Hi", AT))
    assert message_from_dict(json.loads(json.dumps(message_to_dict(named)))).name == "Iris"
    assert "name" not in message_to_dict(Message.of("user", "Hi", AT))  # old payloads unchanged


def test_replayed_messages_carry_the_speakers_only_when_asked():
    _, (conversation,) = load_locomo(LOCOMO_SAMPLE)
    named = conversation_messages(conversation, speaker_names=True)
    assert [m.name for m in named[:3]] == ["Iris", "Tomas", "Iris"]
    assert [m.role for m in named[:3]] == ["user", "assistant", "user"]
    assert {m.name for m in conversation_messages(conversation)} == {None}


def test_the_context_text_says_who_said_what():
    context = [
        {"role": "system", "content": "<observations>"},
        {"role": "user", "content": "Won two games!", "name": "Tomas"},
        {"role": "assistant", "content": "Congrats"},
    ]
    assert context_text(context) == '<observations>\n\nTomas said, "Won two games!"\n\nAssistant said, "Congrats"'


def _run(folder: Path, protocol: str) -> tuple[Path, str]:
    (folder / "locomo.json").write_bytes(LOCOMO_SAMPLE.read_bytes())
    suite = folder / "suite.toml"
    suite.write_text(
        f"""
[suite]
name = "names-{protocol}"
[dataset]
kind = "locomo"
path = "locomo.json"
[engine]
observation = {{ model = "omlab/names-observer", messageTokens = 30, bufferTokens = false }}
reflection = {{ observationTokens = 5000 }}
[models]
actor = "omlab/names-actor"
[latency]
default = {{ kind = "fixed", seconds = 1 }}
[scoring]
protocol = "{protocol}"
[cache]
mode = "off"
[run]
workers = 1
""",
        encoding="utf-8",
    )
    results = folder / "results"
    assert main(["run", str(suite), "--results", str(results), "--quiet", "--no-prepared"]) == 0
    (run_id,) = runs_df(results)["run_id"]
    return results, run_id


@pytest.fixture(scope="module")
def official_names_run(tmp_path_factory):
    OBSERVED.clear()
    ASKED.clear()
    results, run_id = _run(tmp_path_factory.mktemp("names-official"), "official")
    return results, run_id, list(OBSERVED), list(ASKED)


def test_under_the_official_protocol_the_observer_reads_the_speakers_names(official_names_run):
    _, _, observed, _ = official_names_run
    history = "\n".join(observed)
    assert "Iris (" in history and "Tomas (" in history
    assert "User (" not in history and "Assistant (" not in history


def test_under_the_official_protocol_the_actor_gets_one_message_naming_both_speakers(official_names_run):
    _, _, _, asked = official_names_run
    assert asked and all(len(messages) == 1 and messages[0]["role"] == "user" for messages in asked)
    text = asked[0][0]["content"]
    assert "Iris and Tomas" in text  # omlab's opening, speaker_a first
    assert text.endswith("Short answer:\n")


def test_the_report_says_the_speakers_kept_their_names(official_names_run):
    results, run_id, _, _ = official_names_run
    config = json.loads(runs_df(results)["config_json"].iloc[0])
    assert config["replay"]["speaker_names"] is True
    report = write_report(results, run_id).read_text(encoding="utf-8")
    assert "speakers by name" in report


def test_without_the_official_protocol_speakers_stay_user_and_assistant(tmp_path):
    OBSERVED.clear()
    results, run_id = _run(tmp_path, "omlab")
    history = "\n".join(OBSERVED)
    assert "User (" in history and "Iris (" not in history
    report = write_report(results, run_id).read_text(encoding="utf-8")
    assert "speakers as user and assistant" in report
