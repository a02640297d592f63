"""A deterministic, varied chat conversation for engine tests (written for omlab, no dataset)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from omlab.engine.messages import Message

_TOPICS = {
    "cooking": (
        ["risotto", "sourdough", "ramen broth", "lentil curry", "paella", "banana bread"],
        (
            "I tried making {thing} yesterday and it came out {adj}. I used {n} grams of {ingredient} and "
            "cooked it for {m} minutes. My partner Sam says it needs more salt. What should I change next time?"
        ),
        (
            "For {thing}, the usual culprit is {cause}. Try reducing the {ingredient} to about {n2} grams, "
            "toast the base first, and rest it {m2} minutes before serving. Taste as you go and adjust the "
            "seasoning at the end rather than the start. If you want a deeper flavour, add a splash of {extra}."
        ),
    ),
    "travel": (
        ["Lisbon", "Kyoto", "Montreal", "Cape Town", "Oaxaca", "Tallinn"],
        (
            "We are planning a trip to {thing} next month with my sister Ana. Our budget is about {n} euros "
            "for {m} days and we care most about {ingredient}. Which neighbourhood should we stay in?"
        ),
        (
            "In {thing}, travellers who care about {ingredient} usually stay near the old town: it is walkable "
            "and close to the markets. Book about {n2} euros a night to keep within budget, and plan one "
            "day trip. Public transport passes save roughly {m2} percent over single tickets."
        ),
    ),
    "coding": (
        ["the CSV importer", "the login page", "the billing cron job", "the search index", "the API client"],
        (
            "My Python service crashes in {thing} with a KeyError after {n} requests. It started after I "
            "upgraded pandas to version {m}. The stack trace points at line {n2} of importer.py."
        ),
        (
            "A KeyError in {thing} after a pandas upgrade often means a column name changed or became an "
            "index level. Print the frame's columns right before line {n2}, pin pandas back to the previous "
            "release to confirm, and add a test that loads a {m2}-row sample file so the regression is caught."
        ),
    ),
    "fitness": (
        ["half marathon", "10k race", "cycling sportive", "swim meet", "climbing trip"],
        (
            "I signed up for a {thing} on the {m}th of next month. Right now I run {n} kilometres a week and "
            "my knee hurts a little after long runs. I prefer training in the morning before work."
        ),
        (
            "For a {thing} in that time frame, build volume by at most ten percent a week: go from {n} to "
            "about {n2} kilometres, keep one long session, and add two strength sessions for the knee. "
            "Morning sessions are fine; eat something small first and sleep at least {m2} hours."
        ),
    ),
    "books": (
        ["The Left Hand of Darkness", "Middlemarch", "Piranesi", "The Overstory", "Pachinko"],
        (
            "I just finished {thing} and loved the {ingredient}. I read about {n} pages a day, mostly on the "
            "train. Can you recommend something similar that is shorter than {m} pages?"
        ),
        (
            "If you liked the {ingredient} in {thing}, try a novel with a similar structure but a tighter "
            "length: around {n2} pages would suit your train reading. Reading {m2} pages a day, you would "
            "finish it in under two weeks. Keep a small notebook for quotes you want to remember."
        ),
    ),
}
_ADJ = ["too dry", "a bit bland", "perfect", "burnt on the bottom", "surprisingly good"]
_INGREDIENTS = ["butter", "food", "museums", "the ending", "hiking", "parmesan", "prose", "nightlife"]
_EXTRA = ["white wine", "lemon juice", "miso", "smoked paprika"]
_CAUSES = ["too much liquid early on", "heat that is too high", "not enough resting time"]
_FILLER = [
    "Thanks, that helps a lot.",
    "Great, that worked perfectly!",
    "Ok, I'll try that tonight.",
    "Can you explain that last part in more detail?",
]


def make_conversation(
    target_tokens: int, *, seed: int = 7, start: datetime | None = None, thread_id: str = "t1"
) -> list[Message]:
    """User/assistant messages totalling roughly ``target_tokens`` (by a chars/4 estimate),
    a few minutes apart, spanning several days."""
    rng = random.Random(seed)
    when = start or datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
    out: list[Message] = []
    chars = 0
    index = 0
    while chars / 4 < target_tokens:
        topic = rng.choice(list(_TOPICS))
        things, user_t, assistant_t = _TOPICS[topic]
        fill = {
            "thing": rng.choice(things),
            "adj": rng.choice(_ADJ),
            "ingredient": rng.choice(_INGREDIENTS),
            "n": rng.randint(2, 900),
            "m": rng.randint(2, 60),
            "n2": rng.randint(2, 900),
            "m2": rng.randint(2, 60),
            "extra": rng.choice(_EXTRA),
            "cause": rng.choice(_CAUSES),
        }
        user_text = user_t.format(**fill)
        if rng.random() < 0.3:
            user_text += " " + rng.choice(_FILLER)
        assistant_text = " ".join(assistant_t.format(**fill) for _ in range(rng.randint(1, 3)))
        for role, text in (("user", user_text), ("assistant", assistant_text)):
            index += 1
            out.append(Message.of(role, text, when, id=f"{thread_id}-m{index:05d}", thread_id=thread_id))
            chars += len(text)
            when += timedelta(minutes=rng.randint(1, 9))
        if rng.random() < 0.08:
            when += timedelta(days=rng.randint(1, 3), hours=rng.randint(0, 5))
    return out


async def feed_and_settle(om, clock, messages: list[Message], thread: str = "t") -> None:
    """Add ``messages`` one per step to ``thread``, moving the virtual ``clock`` to each message's
    time, then let background work finish."""
    for message in messages:
        clock.set(message.created_at)
        await om.add_messages(thread, [message])
    await om.settle()
