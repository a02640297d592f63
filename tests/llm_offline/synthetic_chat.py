"""A seeded generator of realistic-looking chat transcripts in the observer's input format."""

from __future__ import annotations

import random
from datetime import date, timedelta

_CITIES = ["Lisbon", "Porto", "Kyoto", "Denver", "Oaxaca", "Tallinn", "Cape Town", "Hanoi"]
_NAMES = ["Maria", "Tom", "Aiko", "Daniel", "Priya", "Lucas", "Fatima", "Oliver"]
_THINGS = [
    "a used Honda Civic",
    "a standing desk",
    "a Sony camera",
    "hiking boots",
    "a Kindle",
    "a road bike",
]
_USER_FACTS = [
    "I moved to {city} about two years ago with my partner {name}.",
    "My daughter just turned {n} and she loves drawing horses.",
    "I bought {thing} last week for ${price}.",
    "I work as a nurse on night shifts, so I usually sleep until noon.",
    "I'm allergic to peanuts and shellfish, which makes eating out tricky.",
    "My sister {name} is visiting next Friday and staying for {n} days.",
    "I ran my first half marathon in {city} in 2 hours and {n} minutes.",
    "We adopted a rescue dog named Biscuit in March.",
    "I've been learning Portuguese on Duolingo for {n} months now.",
    "Honestly I think the weather has been pretty strange lately.",
    "I usually commute by bike, it takes about {n} minutes each way.",
]
_USER_ASKS = [
    "Can you suggest some good restaurants in {city} for a birthday dinner?",
    "What should I pack for a {n}-day trip to {city} in winter?",
    "How do I keep my sourdough starter alive while I'm traveling?",
    "Could you help me plan a weekly budget for groceries?",
    "Which of those options would be best for a beginner?",
    "I'd like to find a beginner-friendly yoga class near my place.",
    "I'm planning to repaint the living room this weekend, any tips?",
    "Please write a short thank-you note for my neighbor {name}.",
]
_CHITCHAT = ["Thanks!", "ok", "Great, thank you so much!", "Cool.", "Sounds good.", "hello"]
_ASSISTANT_OPENERS = [
    "Great question! Here are some options you might consider for {city}:",
    "Sure, I'd be happy to help with that. Here is a plan that should work well:",
    "That's a lovely idea. Below are a few suggestions based on what you told me:",
    "Here are a few things to keep in mind:",
]
_ASSISTANT_SENTENCES = [
    "Many locals recommend booking at least {n} days in advance, especially on weekends.",
    "Prices usually range from ${price} to ${price2} per person, depending on the season.",
    "It is generally a good idea to check the opening hours before you go, since they can change.",
    "If you prefer something quieter, the neighbourhoods further from the center tend to be calmer.",
    "You can also look at online reviews to get a sense of what other people experienced.",
    "Keep in mind that public transport in {city} runs less frequently after midnight.",
    "A gradual approach works best, so start small and increase the effort over {n} weeks.",
    "Make sure to store everything in a cool, dry place away from direct sunlight.",
    "This usually takes between {n} and {n2} hours, depending on your experience.",
    "Another option is to ask friends or neighbours for personal recommendations.",
]
_ITEMS = [
    "**Casa {name}** - a cosy family-run place with seasonal dishes and friendly staff.",
    "**The {city} Market** - lots of stalls, good for trying many small plates at once.",
    "**Morning routine** - stretch for {n} minutes and drink a glass of water before coffee.",
    "**Layered clothing** - a thermal base layer, a fleece and a waterproof jacket.",
    "**Budget tracking** - use a simple spreadsheet and review it every Sunday evening.",
    "**Practice schedule** - three short sessions a week are better than one long one.",
    "**Studio {name}** - beginner classes on Tuesdays and Thursdays at {n} PM.",
]
_CLOSERS = [
    "Would you like me to go into more detail on any of these?",
    "Let me know if you want me to adjust anything!",
    "I hope this helps, and enjoy!",
]


def synthetic_history(seed: int, days: int, exchanges_per_day: int) -> str:
    """History lines (date headers and entries) for ``days`` days of chat."""
    rng = random.Random(seed)

    def fill(template: str) -> str:
        return template.format(
            city=rng.choice(_CITIES),
            name=rng.choice(_NAMES),
            thing=rng.choice(_THINGS),
            n=rng.randint(2, 12),
            n2=rng.randint(13, 20),
            price=rng.randint(10, 90),
            price2=rng.randint(100, 300),
        )

    lines: list[str] = []
    day = date(2025, 11, 3)
    for _ in range(days):
        lines.append(f"{day:%b} {day.day} {day.year}:")
        minutes = 8 * 60 + rng.randint(0, 120)
        for _ in range(exchanges_per_day):
            clock = f"{(minutes // 60 - 1) % 12 + 1}:{minutes % 60:02d} {'AM' if minutes < 720 else 'PM'}"
            if rng.random() < 0.12:
                user = rng.choice(_CHITCHAT)
            else:
                parts = [fill(rng.choice(_USER_FACTS)) for _ in range(rng.randint(1, 3))]
                parts.append(fill(rng.choice(_USER_ASKS)))
                user = " ".join(parts)
            lines.append(f"User ({clock}): {user}")
            if rng.random() < 0.15:
                lines.append(f'Tool Call web_search ({clock}): {{"query": "{fill("restaurants in {city}")}"}}')
                lines.append(
                    f'Tool Result web_search ({clock}): [{{"title": "Top 10 places", "rating": 4.{rng.randint(1, 9)}}}]'
                )
            body = [fill(rng.choice(_ASSISTANT_OPENERS)), ""]
            body += [f"{i}. {fill(rng.choice(_ITEMS))}" for i in range(1, rng.randint(3, 7))]
            body += ["", " ".join(fill(rng.choice(_ASSISTANT_SENTENCES)) for _ in range(rng.randint(3, 8)))]
            body += [rng.choice(_CLOSERS)]
            lines.append("Assistant: " + "\n".join(body))
            minutes = min(minutes + rng.randint(3, 40), 23 * 60 + 50)
        day += timedelta(days=rng.randint(1, 3))
    return "\n".join(lines)


def observer_message(history: str, previous: str | None = None) -> str:
    """The observer user message around ``history`` (the engine's contract)."""
    head = ""
    if previous is not None:
        head = (
            f"## Previous Observations\n\n{previous}\n\n---\n\n"
            "Do not repeat these existing observations. Your new observations will be appended.\n\n"
        )
    return (
        f"{head}## New Message History to Observe\n\n{history}\n\n---\n\n## Your Task\n\n"
        "Extract new observations from the message history above."
    )
