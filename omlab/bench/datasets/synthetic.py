"""Seeded synthetic long conversations with planted, checkable recall questions.

``generate_synthetic(seed, target_tokens)`` builds a user/assistant conversation of roughly
``target_tokens`` tokens (estimated as characters / 4, which is fast and machine-independent, so
the output depends only on the seed and the options): dated sessions of template-based filler on
varied topics (cooking, travel, coding help, fitness, books, movies), with facts planted into
user turns. Question kinds, named like LongMemEval's types:

- ``single-session-user``: the user states a fact once; the answer is that value;
- ``knowledge-update``: the user states a fact, later changes it once or twice; the answer is
  the latest value (evidence: every statement, oldest first);
- ``temporal-reasoning``: two dated one-off events ("today I …") in different sessions; either
  "how many days had passed …" (answer ``"<n> days"`` from the turn dates) or "which did I do
  first" (answer: the earlier event);
- ``multi-session``: a count reported in 2-4 sessions; the answer is the total;
- abstention (``is_abstention=True``, id suffix ``_abs``, type ``single-session-user``): about
  something never said; the answer is an explanation.

Every question's ``evidence_ids`` point at the turns that plant it. Filler never contains a fact
value, event, tally or abstention subject (see ``_synthetic_topics`` and ``_synthetic_facts``), so answers are derivable
from the evidence turns only. Deterministic for a given seed and options (``random.Random``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any

from omlab.bench.datasets import _synthetic_facts as fact_bank
from omlab.bench.datasets import _synthetic_topics as topic_bank
from omlab.bench.datasets._fields import pace_delta
from omlab.bench.datasets.provenance import conversations_digest
from omlab.bench.datasets.schema import Conversation, DatasetInfo, Question, Session, Turn

GENERATOR_VERSION = "omlab-synthetic/1"
CHARS_PER_TOKEN = 4
DEFAULT_START = datetime(2024, 1, 8, 9, 0, tzinfo=UTC)
DEFAULT_MIX: dict[str, float] = {
    "single-session-user": 0.30,
    "knowledge-update": 0.20,
    "temporal-reasoning": 0.20,
    "multi-session": 0.15,
    "abstention": 0.15,
}
MIN_SESSIONS = 3


@dataclass(slots=True)
class _Plant:
    """A user statement to insert into a session; ``turn_id`` is filled in when it is placed."""

    session_index: int
    text: str
    turn_id: str | None = None


@dataclass(slots=True)
class _QuestionPlan:
    kind: str
    question: str
    answer: str
    plants: list[_Plant] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def generate_synthetic(
    seed: int,
    target_tokens: int,
    *,
    n_questions: int = 20,
    start: datetime = DEFAULT_START,
    session_tokens: int = 3000,
    turn_pace: timedelta | float = timedelta(seconds=30),
    mix: Mapping[str, float] | None = None,
) -> Conversation:
    """Generate one synthetic conversation.

    Args:
        seed: Seed of the generator; same seed and options -> identical conversation.
        target_tokens: Approximate size (characters / 4) of all turn content; at least
            ``MIN_SESSIONS`` sessions are generated however small the target.
        n_questions: How many questions, split over the kinds by ``mix``.
        start: Timezone-aware date of the first session; later sessions follow 1-3 days apart
            at a random time between 08:00 and 18:59.
        session_tokens: Average session size in tokens.
        turn_pace: Seconds (or timedelta) between consecutive turns of a session.
        mix: Weights per kind (keys of ``DEFAULT_MIX``); counts use largest remainders.

    Raises:
        ValueError: Bad option (named), or more questions of a kind than the banks can plant.
    """
    _validate(target_tokens, n_questions, start, session_tokens)
    pace = pace_delta(turn_pace)
    rng = random.Random(seed)
    n_sessions = max(MIN_SESSIONS, math.ceil(target_tokens / session_tokens))
    counts = _allocate(n_questions, dict(DEFAULT_MIX if mix is None else mix))
    plans = _plan_questions(rng, counts, n_sessions)
    rng.shuffle(plans)
    plants_by_session: dict[int, list[_Plant]] = {}
    for plan in plans:
        for plant in plan.plants:
            plants_by_session.setdefault(plant.session_index, []).append(plant)

    sessions = _sessions(rng, n_sessions, target_tokens * CHARS_PER_TOKEN, start, pace, plants_by_session)
    questions = _questions(seed, plans, sessions)
    content_chars = sum(len(turn.content) for session in sessions for turn in session.turns)
    return Conversation(
        id=f"synthetic-{seed}-{target_tokens}",
        sessions=sessions,
        questions=questions,
        dataset="synthetic",
        metadata={
            "generator": GENERATOR_VERSION,
            "seed": seed,
            "target_tokens": target_tokens,
            "estimated_tokens": -(-content_chars // CHARS_PER_TOKEN),
            "session_tokens": session_tokens,
            "n_sessions": n_sessions,
        },
    )


def load_synthetic(
    seeds: int | Sequence[int],
    target_tokens: int,
    **options: Any,
) -> tuple[DatasetInfo, list[Conversation]]:
    """Generate one conversation per seed and describe them like a loaded dataset.

    ``options`` are ``generate_synthetic``'s keyword options. The DatasetInfo's ``sha256`` is a
    digest of the generated content, its ``revision`` the generator version.
    """
    seed_list = [seeds] if isinstance(seeds, int) else list(seeds)
    conversations = [generate_synthetic(seed, target_tokens, **options) for seed in seed_list]
    info = DatasetInfo(
        name="synthetic",
        subset=f"{target_tokens}-tokens",
        source=f"omlab synthetic generator, seeds {seed_list}",
        revision=GENERATOR_VERSION,
        sha256=conversations_digest(conversations),
        n_conversations=len(conversations),
    )
    return info, conversations


def _validate(target_tokens: int, n_questions: int, start: datetime, session_tokens: int) -> None:
    if not isinstance(target_tokens, int) or target_tokens <= 0:
        raise ValueError(f"target_tokens must be a positive int, got {target_tokens!r}")
    if not isinstance(n_questions, int) or n_questions < 0:
        raise ValueError(f"n_questions must be an int >= 0, got {n_questions!r}")
    if not isinstance(session_tokens, int) or session_tokens < 200:
        raise ValueError(f"session_tokens must be an int >= 200, got {session_tokens!r}")
    if start.tzinfo is None:
        raise ValueError(f"start must be timezone-aware, got {start.isoformat()}")


def _allocate(n_questions: int, mix: dict[str, float]) -> dict[str, int]:
    unknown = set(mix) - set(DEFAULT_MIX)
    if unknown or any(weight < 0 for weight in mix.values()) or sum(mix.values()) <= 0:
        raise ValueError(
            f"mix must map kinds among {', '.join(DEFAULT_MIX)} to non-negative "
            f"weights with a positive sum, got {mix!r}"
        )
    total = sum(mix.values())
    exact = {kind: n_questions * mix.get(kind, 0.0) / total for kind in DEFAULT_MIX}
    counts = {kind: math.floor(value) for kind, value in exact.items()}
    by_remainder = sorted(DEFAULT_MIX, key=lambda kind: (-(exact[kind] - counts[kind]), list(DEFAULT_MIX).index(kind)))
    for kind in by_remainder[: n_questions - sum(counts.values())]:
        counts[kind] += 1
    return counts


def _plan_questions(rng: random.Random, counts: dict[str, int], n_sessions: int) -> list[_QuestionPlan]:
    n_facts = counts["single-session-user"] + counts["knowledge-update"]
    capacity = {
        "single-session-user + knowledge-update": (n_facts, len(fact_bank.FACTS)),
        "temporal-reasoning": (counts["temporal-reasoning"], len(fact_bank.EVENTS) // 2),
        "multi-session": (counts["multi-session"], len(fact_bank.TALLIES)),
        "abstention": (counts["abstention"], len(fact_bank.ABSTENTIONS)),
    }
    for kind, (wanted, available) in capacity.items():
        if wanted > available:
            raise ValueError(
                f"n_questions asks for {wanted} {kind} questions but the generator "
                f"can plant at most {available}; lower n_questions or change mix"
            )
    facts = rng.sample(fact_bank.FACTS, n_facts)
    events = rng.sample(fact_bank.EVENTS, 2 * counts["temporal-reasoning"])
    tallies = rng.sample(fact_bank.TALLIES, counts["multi-session"])
    abstentions = rng.sample(fact_bank.ABSTENTIONS, counts["abstention"])
    numbers = iter(rng.sample(range(100, 1000), len(fact_bank.FACTS) * 3))

    plans: list[_QuestionPlan] = []
    for template in facts[: counts["single-session-user"]]:
        value = _fact_values(rng, template, 1, numbers)[0]
        plan = _QuestionPlan("single-session-user", template.question, value)
        _add_plant(plan, rng.randrange(n_sessions), template.statement.format(value=value), rng)
        plans.append(plan)
    for template in facts[counts["single-session-user"] :]:
        n_updates = 2 if n_sessions >= 3 and rng.random() < 0.3 else 1
        values = _fact_values(rng, template, n_updates + 1, numbers)
        where = sorted(rng.sample(range(n_sessions), n_updates + 1))
        plan = _QuestionPlan(
            "knowledge-update", template.update_question, values[-1], extra={"previous_values": values[:-1]}
        )
        _add_plant(plan, where[0], template.statement.format(value=values[0]), rng)
        for position in range(1, n_updates + 1):
            _add_plant(
                plan, where[position], template.update.format(old=values[position - 1], new=values[position]), rng
            )
        plans.append(plan)
    for pair in range(counts["temporal-reasoning"]):
        first, second = events[2 * pair], events[2 * pair + 1]
        earlier, later = sorted(rng.sample(range(n_sessions), 2))
        if rng.random() < 0.5:
            plan = _QuestionPlan(
                "temporal-reasoning",
                f"How many days had passed since I {first.past} when I {second.past}?",
                "",
                extra={"form": "days"},
            )
        else:
            shown = [first.base, second.base]
            rng.shuffle(shown)
            plan = _QuestionPlan(
                "temporal-reasoning",
                f"Which did I do first: {shown[0]} or {shown[1]}?",
                first.base,
                extra={"form": "order"},
            )
        _add_plant(plan, earlier, rng.choice(fact_bank.EVENT_STATEMENTS).format(past=first.past), rng)
        _add_plant(plan, later, rng.choice(fact_bank.EVENT_STATEMENTS).format(past=second.past), rng)
        plans.append(plan)
    for tally in tallies:
        n_reports = rng.randint(2, min(4, n_sessions))
        amounts = [rng.randint(2, 9) for _ in range(n_reports)]
        plan = _QuestionPlan("multi-session", tally.question, str(sum(amounts)), extra={"amounts": amounts})
        for session_index, amount in zip(sorted(rng.sample(range(n_sessions), n_reports)), amounts, strict=True):
            _add_plant(plan, session_index, tally.statement.format(n=amount), rng)
        plans.append(plan)
    for item in abstentions:
        plans.append(
            _QuestionPlan("abstention", item.question, item.explanation, extra={"never_mentioned": list(item.markers)})
        )
    return plans


def _fact_values(rng: random.Random, template: fact_bank.FactTemplate, n: int, numbers: Any) -> list[str]:
    if template.values:
        return rng.sample(template.values, n)
    return [str(next(numbers)) for _ in range(n)]


def _add_plant(plan: _QuestionPlan, session_index: int, statement: str, rng: random.Random) -> None:
    lead = rng.choice(fact_bank.LEAD_INS)
    if lead and not lead.endswith(": ") and not statement.startswith(("I ", "I'")):
        statement = statement[0].lower() + statement[1:]
    plan.plants.append(_Plant(session_index=session_index, text=lead + statement))


class _SlotPicker(dict):
    """``str.format_map`` mapping that draws slot values on first use and keeps them.

    A trailing digit names a second draw from the same pool (``{exercise2}``), so one template can
    mention two different values.
    """

    def __init__(self, rng: random.Random, slots: dict[str, tuple[str, ...]]) -> None:
        super().__init__()
        self._rng = rng
        self._slots = slots

    def __missing__(self, key: str) -> str:
        value = self._rng.choice(self._slots[key.rstrip("0123456789")])
        self[key] = value
        return value

    def refresh(self, probability: float) -> None:
        """Forget each bound value with ``probability`` so the conversation drifts naturally."""
        for key in [key for key in self if self._rng.random() < probability]:
            del self[key]


def _filler_pairs(rng: random.Random, budget_chars: float) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    used = 0
    while used < budget_chars or not pairs:
        topic = rng.choice(topic_bank.TOPICS)
        picker = _SlotPicker(rng, topic.slots)
        for position in range(rng.randint(5, 12)):
            picker.refresh(0.35)
            pair = _pair(rng, topic, picker, first=position == 0)
            pairs.append(pair)
            used += len(pair[0]) + len(pair[1])
            if used >= budget_chars:
                break
    return pairs


def _pair(rng: random.Random, topic: topic_bank.Topic, picker: _SlotPicker, *, first: bool) -> tuple[str, str]:
    asks_anew = first or rng.random() < 0.25
    user = rng.choice(topic.user_openers if asks_anew else topic.user_followups).format_map(picker)
    parts = [rng.choice(topic.assistant_openers)] if asks_anew or rng.random() < 0.3 else []
    parts += rng.sample(topic.assistant_points, rng.randint(3, min(5, len(topic.assistant_points))))
    if rng.random() < 0.4:
        parts.append(rng.choice(topic.assistant_closers))
    return user, " ".join(part.format_map(picker) for part in parts)


def _session_dates(rng: random.Random, n_sessions: int, start: datetime) -> list[datetime]:
    dates = [start]
    day = start.date()
    for _ in range(n_sessions - 1):
        day += timedelta(days=rng.randint(1, 3))
        dates.append(datetime.combine(day, time(rng.randint(8, 18), rng.randint(0, 59)), tzinfo=start.tzinfo))
    return dates


def _sessions(
    rng: random.Random,
    n_sessions: int,
    target_chars: int,
    start: datetime,
    pace: timedelta,
    plants_by_session: dict[int, list[_Plant]],
) -> list[Session]:
    width = max(3, len(str(n_sessions)))
    sessions: list[Session] = []
    remaining = float(target_chars)
    for index, date in enumerate(_session_dates(rng, n_sessions, start)):
        sessions_left = n_sessions - index
        # Budgets track what is left, so per-session overshoot cancels out over the run.
        budget = remaining if sessions_left == 1 else remaining / sessions_left * rng.uniform(0.8, 1.2)
        plants = plants_by_session.get(index, [])
        acknowledgements = [rng.choice(fact_bank.ACKNOWLEDGEMENTS) for _ in plants]
        planted_chars = sum(len(p.text) + len(a) for p, a in zip(plants, acknowledgements, strict=True))
        pairs: list[tuple[str, str, _Plant | None]] = [
            (user, assistant, None) for user, assistant in _filler_pairs(rng, budget - planted_chars)
        ]
        for plant, acknowledgement in zip(plants, acknowledgements, strict=True):
            pairs.insert(rng.randint(0, len(pairs)), (plant.text, acknowledgement, plant))
        session_id = f"s{index + 1:0{width}d}"
        turns: list[Turn] = []
        for user, assistant, plant in pairs:
            for role, content in (("user", user), ("assistant", assistant)):
                turn_id = f"{session_id}:{len(turns) + 1}"
                evidence = plant is not None and role == "user"
                if evidence:
                    plant.turn_id = turn_id  # type: ignore[union-attr]
                turns.append(
                    Turn(
                        id=turn_id,
                        role=role,
                        content=content,
                        created_at=date + len(turns) * pace,
                        evidence_id=turn_id if evidence else None,
                    )
                )
        remaining -= sum(len(turn.content) for turn in turns)
        sessions.append(Session(id=session_id, date=date, turns=turns))
    return sessions


def _questions(seed: int, plans: list[_QuestionPlan], sessions: list[Session]) -> list[Question]:
    created = {turn.id: turn.created_at for session in sessions for turn in session.turns}
    question_date = sessions[-1].turns[-1].created_at + timedelta(days=1)
    questions = []
    for number, plan in enumerate(plans, start=1):
        evidence = [plant.turn_id for plant in plan.plants if plant.turn_id is not None]
        answer = plan.answer
        if plan.extra.get("form") == "days":
            answer = f"{(created[evidence[1]].date() - created[evidence[0]].date()).days} days"
        abstention = plan.kind == "abstention"
        questions.append(
            Question(
                id=f"syn{seed}-q{number:03d}{'_abs' if abstention else ''}",
                type="single-session-user" if abstention else plan.kind,
                question=plan.question,
                answer=answer,
                question_date=question_date,
                evidence_ids=evidence,
                is_abstention=abstention,
                extra={"kind": plan.kind, **plan.extra},
            )
        )
    return questions
