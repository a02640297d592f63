"""Text banks for the synthetic generator: filler topics and plantable facts.

Invariants the generator's tests rely on (keep them when editing): no filler template or slot
value contains a fact value, an event phrase, a tally phrase, an abstention marker, a weekday
name or a three-digit number, so every planted answer is found only in its evidence turns and
every abstention subject appears nowhere.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Topic:
    """A filler subject: user questions, assistant advice, and the slot values they draw from."""

    name: str
    slots: dict[str, tuple[str, ...]]
    user_openers: tuple[str, ...]
    user_followups: tuple[str, ...]
    assistant_openers: tuple[str, ...]
    assistant_points: tuple[str, ...]
    assistant_closers: tuple[str, ...]


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


TOPICS: tuple[Topic, ...] = (
    Topic(
        name="cooking",
        slots={
            "dish": (
                "a mushroom risotto",
                "chicken tikka masala",
                "a vegetable lasagna",
                "shakshuka",
                "a lentil soup",
                "beef stew",
                "pad thai",
                "a chickpea curry",
                "homemade gnocchi",
                "fish tacos",
                "a leek quiche",
                "ratatouille",
                "paella",
                "stuffed peppers",
                "a ramen broth",
                "a roast chicken",
            ),
            "ingredient": (
                "garlic",
                "shallots",
                "fresh thyme",
                "smoked paprika",
                "coconut milk",
                "parmesan",
                "lemon zest",
                "cumin",
                "ginger",
                "miso paste",
                "anchovies",
                "crème fraîche",
                "chili flakes",
                "fish sauce",
                "brown butter",
                "capers",
            ),
            "people": ("two", "four", "six", "eight", "ten"),
            "occasion": (
                "tonight",
                "this weekend",
                "a dinner party",
                "my partner's birthday",
                "a potluck at work",
                "a quiet weekend lunch",
            ),
            "technique": (
                "searing the meat",
                "deglazing the pan",
                "blooming the spices",
                "resting the dough",
                "toasting the rice",
                "reducing the sauce",
                "salting ahead",
                "blanching the vegetables",
            ),
            "equipment": (
                "cast-iron skillet",
                "Dutch oven",
                "stand mixer",
                "pressure cooker",
                "wok",
                "sheet pan",
                "food processor",
                "slow cooker",
            ),
        },
        user_openers=(
            "I'm planning to cook {dish} for {people} people {occasion}. Any tips on getting the timing right?",
            "Can you help me with {dish}? Last time it came out bland and I'm not sure what went wrong.",
            "I want to try {dish} but I only have a {equipment}. Will that work?",
            "What can I use instead of {ingredient} in {dish}? I ran out and the shops are closed.",
            "How far ahead can I prep {dish} without it losing texture?",
            "My {equipment} keeps giving me uneven results with {dish}. What am I doing wrong?",
        ),
        user_followups=(
            "That makes sense. Should I add the {ingredient} early or right at the end?",
            "Good point about {technique}. How long should that take, roughly?",
            "Would a {equipment} change anything here?",
            "What would you serve alongside it?",
            "If I double the recipe, does the cooking time change much?",
            "And if someone at the table doesn't like {ingredient}?",
        ),
        assistant_openers=(
            "Great choice: {dish} is forgiving once you get a couple of details right.",
            "Happy to help with that.",
            "Good question, and it's a common stumbling block.",
            "Sure. A few things make the biggest difference here.",
        ),
        assistant_points=(
            "Start with {technique}; it builds a layer of flavour that the rest of the dish leans on.",
            "Season in stages rather than all at the end, tasting as you go.",
            "A little {ingredient} added near the end brightens everything without overpowering it.",
            "If you're using a {equipment}, keep the heat a notch lower than the recipe says, because it holds heat well.",
            "Most of the prep, such as chopping, measuring and making the base, can be done a few hours ahead and kept covered in the fridge.",
            "Let it rest for a few minutes before serving so the flavours settle and the texture firms up.",
            "For {people} people, use a slightly larger pan so nothing steams instead of browning.",
            "If it tasted flat last time, it usually needs acid or salt rather than more spice; a squeeze of lemon often fixes it.",
            "Swap in {ingredient} if you need a substitute; the flavour shifts a little but the dish still works.",
            "Keep a splash of the cooking liquid aside so you can loosen the sauce just before serving.",
            "Cut everything to a similar size so it cooks evenly and nothing turns to mush.",
            "Warm the plates if you can; it keeps the food at its best for longer at the table.",
        ),
        assistant_closers=(
            "Enjoy the cooking, and let me know how it turns out!",
            "If you tell me what's in your pantry, I can suggest tweaks.",
            "Good luck, it sounds like a lovely meal.",
        ),
    ),
    Topic(
        name="travel",
        slots={
            "city": (
                "Lisbon",
                "Kyoto",
                "Barcelona",
                "Vancouver",
                "Marrakesh",
                "Edinburgh",
                "Buenos Aires",
                "Hanoi",
                "Prague",
                "Cape Town",
                "Seville",
                "Oaxaca",
                "Montreal",
                "Istanbul",
            ),
            "duration": ("a long weekend", "five days", "a week", "ten days", "two weeks"),
            "companion": ("my partner", "two friends", "my parents", "a colleague", "a small group"),
            "season": ("early spring", "midsummer", "late autumn", "the winter holidays", "the shoulder season"),
            "activity": (
                "walking tours",
                "food markets",
                "museums",
                "day hikes",
                "boat trips",
                "live music",
                "architecture",
                "street food",
                "vintage shops",
            ),
            "lodging": (
                "a small guesthouse",
                "a budget hotel",
                "an apartment rental",
                "a hostel",
                "a boutique hotel near the old town",
            ),
            "transport": ("the night train", "a rental car", "regional buses", "a budget flight", "a shared shuttle"),
        },
        user_openers=(
            "I'm thinking of spending {duration} in {city} during {season}. Is that a good time to go?",
            "Could you sketch an itinerary for {city}? I'm travelling with {companion} and we love {activity}.",
            "Is it better to stay in {lodging} or somewhere more central when visiting {city}?",
            "How would you get around {city} without spending a fortune?",
            "We have {duration} free and can't decide on a destination. Would {city} be too ambitious?",
        ),
        user_followups=(
            "What neighbourhood would you base yourself in?",
            "Is {transport} a reasonable way to get there, or is it a hassle?",
            "Anything I should book well in advance?",
            "How much cash should I carry versus card?",
            "We also like {activity}; where does that fit in?",
            "What's one thing most visitors miss?",
        ),
        assistant_openers=(
            "That sounds like a wonderful trip.",
            "Good thinking to plan this early.",
            "Sure, here's how I'd approach it.",
        ),
        assistant_points=(
            "Travelling in {season} usually means fewer crowds, although some smaller attractions keep shorter hours.",
            "For {duration}, I'd split the time between the historic centre and one or two day trips.",
            "Base yourself near a main transit line so that {activity} and evenings out don't eat into your time.",
            "Staying in {lodging} keeps costs down and often gets you better local advice.",
            "Book anything with timed entry, such as popular museums, guided tours and trains on holiday dates, a few weeks ahead.",
            "Carry a little cash for markets and small cafés, but cards work almost everywhere now.",
            "Taking {transport} can be cheaper than it looks once you factor in transfers at both ends.",
            "Leave one afternoon unplanned; the best memories often come from wandering.",
            "Check the local holiday calendar, since opening hours change and prices can spike.",
            "Walking is usually the best way to see the old quarter, so pack comfortable shoes.",
            "In {city}, {activity} are easiest to enjoy early in the day before the crowds arrive.",
        ),
        assistant_closers=(
            "Have a great time, and feel free to ask about specific days.",
            "Safe travels!",
            "Tell me your budget and I can narrow it down.",
        ),
    ),
    Topic(
        name="coding",
        slots={
            "language": ("Python", "TypeScript", "Go", "Rust", "Java", "Kotlin", "C#", "Ruby", "Elixir"),
            "framework": ("FastAPI", "React", "Django", "Express", "Spring Boot", "Flask", "Vue", "Rails", "Phoenix"),
            "problem": (
                "a race condition in my worker queue",
                "slow database queries on the reports page",
                "a memory leak in a long-running service",
                "flaky integration tests",
                "a confusing merge conflict",
                "timezone bugs in date handling",
                "an N+1 query problem",
                "a deadlock when two jobs run at once",
            ),
            "tool": (
                "a profiler",
                "structured logging",
                "a debugger",
                "property-based tests",
                "a linter",
                "tracing",
                "a feature flag",
            ),
            "concept": (
                "dependency injection",
                "async/await",
                "database indexes",
                "immutable data",
                "retries with backoff",
                "connection pooling",
                "caching",
                "type hints",
            ),
        },
        user_openers=(
            "I'm stuck on {problem} in a {language} project using {framework}. Where would you start?",
            "Can you explain {concept} in plain terms? I keep seeing it in code reviews.",
            "Our team is debating whether to adopt {framework}. What are the trade-offs?",
            "How would you structure tests for a {language} service that talks to a database?",
            "I inherited a {language} codebase with {problem}. How do I even begin?",
        ),
        user_followups=(
            "Would {tool} help narrow it down?",
            "Could you show what that looks like in {language}?",
            "Is there a risk that this makes the code harder to read?",
            "How do I convince my team this is worth the time?",
            "What's the most common mistake people make with {concept}?",
        ),
        assistant_openers=(
            "Good question; this trips up a lot of experienced developers.",
            "Let's break it down.",
            "Sure, here's a practical way to approach it.",
        ),
        assistant_points=(
            "First, reproduce the problem reliably; a failing test that shows it is worth more than any guess.",
            "Adding {tool} around the suspicious code path usually tells you within minutes where the time or memory goes.",
            "With {concept}, the key idea is to make the dependency explicit instead of hiding it inside the function.",
            "In {language}, keep the boundary between pure logic and input or output thin so the core stays easy to test.",
            "For {problem}, check whether two code paths touch shared state without coordination.",
            "Measure before and after any change; intuition about performance is wrong surprisingly often.",
            "Keep the fix small and add a regression test so the same bug can't quietly return.",
            "{framework} is productive for small teams, but its conventions matter more as the codebase grows.",
            "Write test names as sentences describing behaviour; they double as documentation.",
            "If the change touches many files, split it into a refactor commit and a behaviour commit.",
            "Read the error message twice, slowly; it often names the exact line you need.",
        ),
        assistant_closers=(
            "If you paste the relevant snippet, I can point at specific lines.",
            "Happy debugging!",
            "Let me know what the logs show.",
        ),
    ),
    Topic(
        name="fitness",
        slots={
            "goal": (
                "run a 10k",
                "get stronger at deadlifts",
                "improve my flexibility",
                "lose a bit of weight",
                "build endurance for hiking",
                "do my first pull-up",
                "fix my posture",
            ),
            "exercise": (
                "squats",
                "lunges",
                "planks",
                "kettlebell swings",
                "push-ups",
                "rowing intervals",
                "hill sprints",
                "yoga flows",
                "step-ups",
                "deadlifts",
            ),
            "minutes": ("twenty", "thirty", "forty-five", "sixty"),
            "frequency": ("twice a week", "three times a week", "every other day", "on weekends"),
            "issue": (
                "sore knees",
                "a stiff lower back",
                "tight hamstrings",
                "low energy in the afternoons",
                "trouble sleeping after evening workouts",
                "shin splints",
            ),
        },
        user_openers=(
            "I want to {goal} within a few months. How should I structure my training?",
            "I can only train {frequency} for about {minutes} minutes. Is that enough to make progress?",
            "Lately I've had {issue}. Should I change my routine?",
            "Is it better to do {exercise} or {exercise} for overall strength?",
        ),
        user_followups=(
            "How do I know if I'm overdoing it?",
            "Should I eat anything specific before a session?",
            "What about rest days, active or complete rest?",
            "Can I swap {exercise} for something easier on the joints?",
            "How long until I should expect to see a difference?",
        ),
        assistant_openers=(
            "That's a realistic goal.",
            "Good that you're asking before pushing harder.",
            "Here's a simple way to think about it.",
        ),
        assistant_points=(
            "Consistency beats intensity: training {frequency} for {minutes} minutes adds up faster than occasional heroic sessions.",
            "Build the week around one harder day, one easy day and one skill day.",
            "Warm up with five minutes of easy movement and a few sets of {exercise} at low effort.",
            "If you notice {issue}, reduce volume for a week and focus on form rather than load.",
            "Progress by small steps, a few more reps or a slightly heavier weight each week.",
            "Sleep and protein do more for recovery than any supplement.",
            "Track how you feel, not just the numbers; persistent fatigue is a signal to back off.",
            "Mix in {exercise} to strengthen the muscles that support your joints.",
            "A light walk on rest days keeps you loose without adding fatigue.",
            "Most people notice real changes after six to eight weeks of steady work.",
        ),
        assistant_closers=(
            "Listen to your body and adjust as you go.",
            "Let me know how the first couple of weeks feel.",
            "You've got this!",
        ),
    ),
    Topic(
        name="books",
        slots={
            "genre": (
                "literary fiction",
                "science fiction",
                "historical novels",
                "narrative nonfiction",
                "mysteries",
                "fantasy",
                "essay collections",
                "memoirs",
            ),
            "title": (
                "The Salt Orchard",
                "Northern Lanterns",
                "A Map of Small Rooms",
                "The Glass Cartographer",
                "Winter Ledger",
                "The Quiet Engine",
                "Harbour of Names",
                "The Listening Hour",
            ),
            "mood": (
                "something light",
                "a slow, absorbing read",
                "a page-turner",
                "something thought-provoking",
                "a book I can dip in and out of",
            ),
            "theme": (
                "memory",
                "family secrets",
                "exploration",
                "friendship",
                "ambition",
                "grief",
                "small-town life",
                "invention",
            ),
            "habit": ("a chapter a night", "on my commute", "in long stretches at the weekend", "a few pages at lunch"),
        },
        user_openers=(
            "I just finished {title} and loved its focus on {theme}. What should I read next?",
            "I'm in the mood for {mood}. Any {genre} you'd recommend?",
            "I keep starting {genre} and abandoning them halfway. Any advice?",
            "How do you pick books that suit reading {habit}?",
        ),
        user_followups=(
            "Is there anything similar but shorter?",
            "Would you recommend the audiobook or the print version?",
            "What makes {title} stand out compared with others in the genre?",
            "Any tips for remembering more of what I read?",
        ),
        assistant_openers=(
            "What a great pick.",
            "Happy to suggest a few.",
            "That's a common experience, honestly.",
        ),
        assistant_points=(
            "If {theme} is what drew you in, look for {genre} that put character before plot.",
            "{title} is a good next step: it shares that patient, observant tone.",
            "Reading {habit} works best with books that have short chapters and clear breaks.",
            "It's fine to abandon a book; life is short and the next one might click.",
            "Keeping a few lines of notes after each session helps more than highlighting.",
            "Alternating between {genre} and something lighter keeps the habit going.",
            "Libraries often have digital loans, which makes it cheap to sample several openings.",
            "Reading alongside a friend and comparing notes keeps you going through slower middles.",
            "Audiobooks suit dense {genre} surprisingly well if the narrator is good.",
        ),
        assistant_closers=(
            "Happy reading!",
            "Tell me what you think if you pick one up.",
            "I can suggest more once I know what clicked.",
        ),
    ),
    Topic(
        name="movies",
        slots={
            "film_genre": (
                "thrillers",
                "documentaries",
                "animated films",
                "romantic comedies",
                "westerns",
                "heist movies",
                "period dramas",
            ),
            "era": ("the seventies", "the nineties", "the last few years", "the silent era"),
            "element": (
                "the soundtrack",
                "the cinematography",
                "the dialogue",
                "the pacing",
                "the ending",
                "the lead performance",
            ),
        },
        user_openers=(
            "I want to host a movie night of {film_genre} from {era}. What would you pick?",
            "Why do people rave about {element} in older films?",
            "I fell asleep halfway through a highly rated film last night. Is it me or {element}?",
        ),
        user_followups=(
            "Any hidden gems that fewer people have seen?",
            "Would subtitles put off a mixed group?",
            "How long should a double feature be before people get restless?",
        ),
        assistant_openers=(
            "Fun plan.",
            "Good question; taste in film is personal, but there are patterns.",
            "Here's what I'd suggest.",
        ),
        assistant_points=(
            "For a mixed group, open with something fast-paced and save the slower classic for second.",
            "{film_genre} from {era} often reward patience, especially in {element}.",
            "Hidden gems tend to be festival favourites that never got wide releases.",
            "Subtitles bother people less than you'd expect once the story grabs them.",
            "Keep the total runtime under four hours, with a proper break for snacks.",
            "Pay attention to {element}; it often tells you what the director cared about most.",
            "Watching in a dark room with the phone away changes the experience more than the screen size does.",
        ),
        assistant_closers=(
            "Enjoy the movie night!",
            "Let me know which one wins the vote.",
        ),
    ),
)

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
