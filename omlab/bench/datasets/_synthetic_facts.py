"""Plantable facts for the synthetic generator: personal facts, dated events, tallies, abstentions.

Invariants the generator's tests rely on (keep them when editing, here and in ``_synthetic_topics``): no
filler template or slot value contains a fact value, an event phrase, a tally phrase, an abstention
marker, a weekday name or a three-digit number, so every planted answer is found only in its
evidence turns and every abstention subject appears nowhere.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FactTemplate:
    """A personal fact the user states, may later change, and is asked about."""

    key: str
    statement: str  # {value}
    update: str  # {old} {new}
    question: str  # single-session-user wording
    update_question: str  # knowledge-update wording (asks for the current value)
    values: tuple[str, ...]  # empty: a unique three-digit number is drawn


@dataclass(frozen=True, slots=True)
class Event:
    """A one-off dated event ("today I …") for temporal questions."""

    past: str
    base: str


@dataclass(frozen=True, slots=True)
class Tally:
    """Something counted across sessions for aggregation questions."""

    statement: str  # {n}
    question: str


@dataclass(frozen=True, slots=True)
class AbstentionItem:
    """A question about something never said, with the words that must never appear."""

    question: str
    explanation: str
    markers: tuple[str, ...]


FACTS: tuple[FactTemplate, ...] = (
    FactTemplate(
        "kitten",
        "I finally picked a name for my new kitten: {value}.",
        "Quick update about the kitten: we ended up calling her {new} instead of {old}.",
        "What did I name my new kitten?",
        "What is my kitten called now?",
        ("Ziggy", "Moxie", "Bramble", "Nimbus", "Tinsel", "Gizmo", "Sprocket", "Marlowe"),
    ),
    FactTemplate(
        "manager",
        "My new manager at work is called {value}.",
        "There's been a reshuffle at work: {new} replaced {old} as my manager.",
        "What is the name of my manager at work?",
        "Who is my manager at work now?",
        (
            "Imogen Thackeray",
            "Rafael Okonkwo",
            "Priya Venkataraman",
            "Declan Moriarty",
            "Sofia Lindqvist",
            "Tomasz Wierzbicki",
            "Amara Nwosu",
            "Henrik Dahl",
        ),
    ),
    FactTemplate(
        "car",
        "I just bought a used {value}, my first car in years.",
        "I ended up selling the {old} and getting a {new} instead.",
        "What car did I buy?",
        "What car do I drive now?",
        (
            "Mazda CX-5",
            "Subaru Outback",
            "Honda Civic",
            "Volvo V60",
            "Kia Niro",
            "Skoda Octavia",
            "Toyota Corolla",
            "Ford Focus",
        ),
    ),
    FactTemplate(
        "locker",
        "My locker number at the climbing gym is {value}, noting it here so I don't forget.",
        "They moved me to a different locker at the climbing gym: it's {new} now, not {old}.",
        "What is my locker number at the climbing gym?",
        "What is my current locker number at the climbing gym?",
        (),
    ),
    FactTemplate(
        "tea",
        "My go-to tea these days is {value}.",
        "My tea habit changed: I've switched from {old} to {new}.",
        "What is my go-to tea?",
        "What tea do I drink these days?",
        ("lapsang souchong", "genmaicha", "rooibos", "oolong", "darjeeling", "hojicha", "assam", "sencha"),
    ),
    FactTemplate(
        "sister_city",
        "My sister just moved to {value} for her new job.",
        "My sister moved again: she left {old} and now lives in {new}.",
        "Which city did my sister move to?",
        "Which city does my sister live in now?",
        ("Tallinn", "Ljubljana", "Gdansk", "Bergen", "Graz", "Utrecht", "Trondheim", "Aarhus"),
    ),
    FactTemplate(
        "board_game",
        "Our family game night always ends up being {value}.",
        "Family game night has a new favourite: we've dropped {old} for {new}.",
        "Which board game does my family always end up playing?",
        "Which board game does my family play at game night now?",
        ("Carcassonne", "Azul", "Wingspan", "Ticket to Ride", "Catan", "Splendor", "Codenames", "Dominion"),
    ),
    FactTemplate(
        "phone",
        "I switched to a {value} last week.",
        "I returned the {old}; I'm using a {new} now.",
        "Which phone did I switch to?",
        "Which phone am I using now?",
        ("Fairphone 5", "iPhone 15", "Galaxy S23", "OnePlus 12", "Nokia X30", "Xperia 10"),
    ),
    FactTemplate(
        "job",
        "I accepted an offer to work as a {value}.",
        "Change of plans at work: I moved from being a {old} to a role as a {new}.",
        "What job offer did I accept?",
        "What is my job now?",
        (
            "museum registrar",
            "quantity surveyor",
            "acoustic engineer",
            "patent examiner",
            "data steward",
            "cartographer",
            "urban planner",
            "sommelier",
        ),
    ),
    FactTemplate(
        "language",
        "I've started learning {value} on weekday evenings.",
        "I paused {old} for now and started learning {new} instead.",
        "Which language am I learning?",
        "Which language am I learning now?",
        ("Portuguese", "Korean", "Finnish", "Swahili", "Turkish", "Hungarian", "Greek", "Welsh"),
    ),
    FactTemplate(
        "instrument",
        "I signed up for {value} lessons at the community centre.",
        "I gave up on the {old} and switched my lessons to the {new}.",
        "What instrument lessons did I sign up for?",
        "Which instrument am I taking lessons in now?",
        ("cello", "ukulele", "banjo", "bassoon", "harp", "accordion", "trumpet", "mandolin"),
    ),
    FactTemplate(
        "neighbour",
        "My new neighbour introduced herself as {value}.",
        "I got the name wrong earlier: my neighbour is actually {new}, not {old}.",
        "What is my new neighbour's name?",
        "What is my neighbour's name?",
        ("Odette", "Rosalind", "Ingrid", "Beatriz", "Yusra", "Margot", "Philippa", "Noor"),
    ),
    FactTemplate(
        "wall_colour",
        "We finally painted the living room {value}.",
        "We repainted the living room, it's {new} now; the {old} felt too dark.",
        "What colour did we paint the living room?",
        "What colour is the living room now?",
        ("teal", "terracotta", "charcoal grey", "olive green", "mustard yellow", "dusty pink", "navy blue", "burgundy"),
    ),
    FactTemplate(
        "coffee",
        "My usual coffee order is a {value}.",
        "New coffee habit: I've swapped my {old} for a {new}.",
        "What is my usual coffee order?",
        "What is my usual coffee order now?",
        ("flat white", "cortado", "oat latte", "double espresso", "cold brew", "macchiato", "americano"),
    ),
    FactTemplate(
        "podcast",
        "The podcast I never miss is {value}.",
        "I stopped listening to {old}; now my must-listen podcast is {new}.",
        "Which podcast do I never miss?",
        "Which podcast do I never miss these days?",
        (
            "Deep Field Notes",
            "The Slow Burn Hour",
            "Margins and Maps",
            "Night Shift Science",
            "The Long Table",
            "Quiet Revolutions",
        ),
    ),
    FactTemplate(
        "commute",
        "These days I commute by {value}.",
        "My commute changed: I stopped going by {old} and now go by {new}.",
        "How do I commute these days?",
        "How do I commute now?",
        ("electric scooter", "tram", "folding bike", "car share", "motorbike"),
    ),
)

EVENTS: tuple[Event, ...] = (
    Event("renewed my passport", "renew my passport"),
    Event("got my flu shot", "get my flu shot"),
    Event("signed the lease on a new flat", "sign the lease on a new flat"),
    Event("had my wisdom tooth removed", "have my wisdom tooth removed"),
    Event("bought a sewing machine", "buy a sewing machine"),
    Event("joined a community choir", "join a community choir"),
    Event("went to the opera for the first time", "go to the opera for the first time"),
    Event("fixed the leaking roof", "fix the leaking roof"),
    Event("passed my driving theory test", "pass my driving theory test"),
    Event("repainted the garden fence", "repaint the garden fence"),
    Event("replaced the bathroom tap", "replace the bathroom tap"),
    Event("booked the venue for my brother's wedding", "book the venue for my brother's wedding"),
    Event("finished my first pottery class", "finish my first pottery class"),
    Event("adopted a rescue tortoise", "adopt a rescue tortoise"),
    Event("sold my old drum kit", "sell my old drum kit"),
    Event("started a night course in bookkeeping", "start a night course in bookkeeping"),
)

TALLIES: tuple[Tally, ...] = (
    Tally(
        "I picked up {n} secondhand vinyl records at the flea market today.",
        "How many vinyl records did I pick up at the flea market in total?",
    ),
    Tally(
        "I donated {n} bags of old clothes to the charity shop today.",
        "How many bags of clothes did I donate to the charity shop in total?",
    ),
    Tally("I planted {n} rose bushes in the front garden today.", "How many rose bushes did I plant in total?"),
    Tally(
        "I baked {n} loaves of sourdough for the street party today.",
        "How many loaves of sourdough did I bake in total?",
    ),
    Tally(
        "I volunteered {n} hours at the animal shelter today.",
        "How many hours did I volunteer at the animal shelter in total?",
    ),
    Tally(
        "I sold {n} handmade candles at the craft market today.",
        "How many candles did I sell at the craft market in total?",
    ),
    Tally("I framed {n} of my watercolour paintings today.", "How many watercolour paintings did I frame in total?"),
    Tally("I swam {n} lengths at the lido today.", "How many lengths did I swim at the lido in total?"),
)

ABSTENTIONS: tuple[AbstentionItem, ...] = (
    AbstentionItem(
        "What is the name of my grandmother's parrot?",
        "The user never mentioned a parrot or any pet of their grandmother.",
        ("parrot", "grandmother"),
    ),
    AbstentionItem("Which instrument does my roommate play?", "The user never mentioned a roommate.", ("roommate",)),
    AbstentionItem(
        "Which airline did I fly with to Reykjavik?", "The user never mentioned a trip to Reykjavik.", ("reykjavik",)
    ),
    AbstentionItem("What is my blood type?", "The user never mentioned their blood type.", ("blood type",)),
    AbstentionItem(
        "How much did I pay for my new bicycle helmet?",
        "The user never mentioned buying a bicycle helmet.",
        ("helmet",),
    ),
    AbstentionItem("What is the name of my dentist?", "The user never mentioned a dentist.", ("dentist",)),
    AbstentionItem("What colour is my front door?", "The user never mentioned their front door.", ("front door",)),
    AbstentionItem(
        "When is my cousin's wedding?", "The user never mentioned a cousin or a cousin's wedding.", ("cousin",)
    ),
    AbstentionItem("Which chess opening do I prefer?", "The user never mentioned playing chess.", ("chess",)),
    AbstentionItem("What score did I get on the GMAT?", "The user never mentioned taking the GMAT.", ("gmat",)),
    AbstentionItem("Where did I go on my honeymoon?", "The user never mentioned a honeymoon.", ("honeymoon",)),
    AbstentionItem(
        "What breed is my neighbour's dog?", "The user never mentioned a dog belonging to their neighbour.", ("dog",)
    ),
)

LEAD_INS: tuple[str, ...] = (
    "By the way, ",
    "Oh, before I forget: ",
    "Unrelated, but ",
    "",
    "Random update: ",
    "Something personal: ",
)
EVENT_STATEMENTS: tuple[str, ...] = (
    "Today I {past}.",
    "Big day: today I {past}.",
    "Small milestone, today I {past}.",
    "Just so you know, today I {past}.",
)
ACKNOWLEDGEMENTS: tuple[str, ...] = (
    "Thanks for letting me know, I'll keep that in mind.",
    "Noted, thanks for sharing!",
    "Got it, thanks for the update.",
    "Good to know. Shall we get back to where we were?",
    "That's lovely to hear.",
    "Thanks for telling me. Anything else on your mind?",
)
