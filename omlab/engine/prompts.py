"""omlab's own Observer, Reflector and actor-context prompts.

The structure follows the reference engine (om-reference.md §4): a system prompt with extraction
rules, the output format and guidelines; one user message with the previous observations, the prior
thread metadata, the new history and the task, in that order. The wording is omlab's.
"""

from __future__ import annotations

from collections.abc import Sequence

EXTRACTION_RULES = """\
WHAT TO RECORD
- Tell statements from questions. When the user asserts something, write "User stated …"; when
  they ask, write "User asked …". What the user asserts about themselves is authoritative: it
  outranks anything the assistant guessed or suggested.
- Record intentions and plans ("User plans to …", "User will …") with the date they refer to.
- Record changes of state as changes: "User switched to the night shift (previously days)", so a
  later reader knows which value is current.
- Anchor time. Every line starts with the time the message was sent, (HH:MM), 24-hour clock. When
  a message mentions a relative date that can be pinned down ("last Tuesday", "in two weeks",
  "tomorrow"), add the real date at the end of the line: "(meaning Mar 12, 2025)". If it can only be
  estimated, write "(estimated early March 2025)". Never add a date for vague words such as
  "recently" or "a while ago". If one message mentions several events at different times, write one
  line per event so each keeps its own date.
- Keep the user's own striking words in quotes when the exact phrasing matters.
- Use precise verbs: "bought", "subscribed to", "was given", "cancelled", "moved to" — not "has".
- Keep the details that tell things apart: names, handles, places, titles, quantities (write the
  count first), prices, versions, file paths and line numbers, and who did what.
- When the assistant produced something the user may want again (a list of recommendations, a
  recipe, code, a plan, a piece of writing), record its distinguishing content, not just that it
  was produced.
- Short and medium user messages are captured almost verbatim; long ones are summarised with
  their key sentences quoted.
- Group repetitive activity: "Assistant ran the test suite 4 times; the last run passed".
- Note what is waiting on whom ("waiting for user to confirm the budget").
- Mark completion with ✅ only when something is definitely done: the user confirmed it worked,
  a question got a final answer and the user moved on, a goal was reached. Not when the assistant
  merely replied, or the user's reaction is unclear.
- Messages labelled "System-reminder" are runtime instructions, not the user speaking: never
  record them as the user's words or wishes.
"""

OUTPUT_FORMAT = """\
OUTPUT FORMAT
Priorities work like log levels; every observation line starts with one of them:
- 🔴 high: facts the user stated about themselves, their preferences, open goals, critical context
- 🟡 medium: project details, things learned, results of tools and of the assistant's work
- 🟢 low: minor or uncertain details
- ✅ done: something that is now definitely completed (say what, concretely)

Group lines under a "Date:" header per day, ordered by time within the day. Nest related steps
under their parent with "  * -> ".

<observations>
Date: Mar 3, 2025
* 🔴 (09:12) User stated they are training for the Porto half-marathon on Apr 6, 2025
* 🔴 (09:13) User asked for a 5-week plan with at most 4 runs per week
* 🟡 (09:15) Assistant proposed a plan: long run Sundays, intervals Tuesdays, 2 easy runs
  * -> week 5 tapers to 60% volume
* 🔴 (09:20) User will buy new shoes this weekend (meaning Mar 8-9, 2025)
* ✅ (09:31) User confirmed the plan fits their schedule
</observations>

<current-task>
Primary: what the assistant is working on right now
Secondary: other open tasks (mark those "waiting for user")
</current-task>

<suggested-response>
A short hint for the assistant's next message, e.g. "Wait for the user's reply before continuing."
</suggested-response>
"""

GUIDELINES = """\
GUIDELINES
- Be specific enough that someone could act on the line alone; be terse.
- Usually 1 to 5 lines per exchange. Never repeat an observation that already exists.
- For tool use, say what was done, why, and what was learned.
- Record WHAT the assistant did and WHAT it means, not that it "responded".
- Capture user confirmations as ✅ lines.

These observations will be the assistant's only memory of this conversation: make them count.
The user's own messages matter most — never lose a fact the user told you.
"""

SINGLE_THREAD_NOTE = "Do not add thread tags or thread ids to your output.\n"

MULTI_THREAD_NOTE = """\
The history below comes from several conversation threads, each inside <thread id="…">.
Inside <observations>, write one <thread id="…"> block per thread you observed, with that thread's
Date: groups and lines, and that thread's <current-task>, <suggested-response> (and, when asked,
<thread-title>) nested inside its block.
"""

THREAD_TITLE_NOTE = """\
Also output <thread-title>…</thread-title>: a short title (2-6 words) for the conversation, changed
only when the topic has clearly moved on.
"""


def observer_system_prompt(
    *,
    multi_thread: bool = False,
    instruction: str | None = None,
    thread_title: bool = False,
    inline_extractors: Sequence[tuple[str, str]] = (),
) -> str:
    """The Observer's system prompt. ``inline_extractors`` are ``(slug, instructions)`` pairs whose
    values the Observer writes in ``<slug>…</slug>`` sections."""
    parts = [
        (
            "You are the memory of an AI assistant. You read the newest part of a conversation and "
            "write observations about it. Your observations will be the ONLY record of these messages "
            "the assistant keeps: the raw messages are removed afterwards.\n"
        ),
        EXTRACTION_RULES,
        OUTPUT_FORMAT,
        GUIDELINES,
        MULTI_THREAD_NOTE if multi_thread else SINGLE_THREAD_NOTE,
    ]
    if thread_title:
        parts.append(THREAD_TITLE_NOTE)
    where = " (one inside each thread's <thread> block)" if multi_thread else ""
    for slug, text in inline_extractors:
        parts.append(f"Also output <{slug}>…</{slug}>{where}: {text}\n")
    if instruction:
        parts.append(f"=== CUSTOM INSTRUCTIONS ===\n{instruction}\n")
    return "\n".join(parts)


PREVIOUS_OBSERVATIONS_HEADER = "## Previous Observations"
NEW_HISTORY_HEADER = "## New Message History to Observe"
TASK_HEADER = "## Your Task"
TRUNCATION_NOTICE = (
    "Some earlier observations are left out of this window to save space; the assistant still "
    "has all of them. Do not recreate them."
)


def observer_user_prompt(
    *,
    history: str,
    previous_observations: str | None,
    truncated: bool = False,
    prior_metadata: Sequence[tuple[str, str]] = (),
    buffering: bool = False,
    prior_by_thread: Sequence[tuple[str, Sequence[tuple[str, str]]]] = (),
) -> str:
    """The Observer's user message: previous observations, prior metadata, history, task.

    ``prior_by_thread`` (multi-thread mode) lists each thread's hints inside its ``<thread>``."""
    out: list[str] = []
    if previous_observations:
        out.append(
            f"{PREVIOUS_OBSERVATIONS_HEADER}\n\n{previous_observations}\n\n---\n\n"
            "These observations already exist. Do not repeat them; what you write is appended "
            "after them.\n"
        )
        if truncated:
            out.append(TRUNCATION_NOTICE + "\n")
    if prior_by_thread:
        blocks = []
        for thread_id, items in prior_by_thread:
            if items:
                body = "\n".join(f"- prior {key}: {value}" for key, value in items)
                blocks.append(f'<thread id="{thread_id}">\n{body}\n</thread>')
        if blocks:
            out.append(
                "## Prior Thread Metadata\n" + "\n".join(blocks) + "\n"
                "Treat these as hints about where each conversation stood; update them from the new "
                "messages.\n"
            )
    if prior_metadata:
        lines = "\n".join(f"- prior {key}: {value}" for key, value in prior_metadata)
        out.append(
            "## Prior Thread Metadata\n"
            f"{lines}\n"
            "Treat these as hints about where the conversation stood; update them from the new "
            "messages.\n"
        )
    out.append(f"{NEW_HISTORY_HEADER}\n\n{history}\n\n---\n\n")
    task = (
        f"{TASK_HEADER}\n\nWrite new observations for the message history above, in the format "
        "from your instructions. Do not repeat anything already in the previous observations."
    )
    if buffering:
        task += " Always output an <observations> section."
    out.append(task)
    return "\n".join(out)


REFLECTION_HEADER = "## OBSERVATIONS TO REFLECT ON"

COMPRESSION_GUIDANCE = {
    0: "",
    1: (
        "COMPRESSION NEEDED: the last attempt was not smaller than its input. Condense the older "
        "part of the log, keep the recent part detailed, merge repeated tool activity, keep every ✅ "
        "line with its outcome. Aim for about 8/10 of the detail."
    ),
    2: (
        "STRONG COMPRESSION: condense older material hard. Merge the arcs of work on the same file, "
        "topic or module into one line each and remove redundancy. Aim for about 6/10 of the detail."
    ),
    3: (
        "CRITICAL COMPRESSION: summarise the oldest 50-70% of the log into short paragraphs; keep "
        "only the outcomes of tool sequences; drop superseded states. Keep names, dates, decisions, "
        "errors, preferences and architecture. Aim for about 4/10 of the detail."
    ),
    4: (
        "MAXIMUM COMPRESSION: the log may already be dense. Turn every tool sequence into its "
        "outcome, use at most 2-3 date groups per day, keep 1-2 lines per older topic and only the "
        "final state of incremental work. Aim for about 2/10 of the detail. Fewer, more general "
        "lines are better than detail that overflows the budget."
    ),
}


def reflector_system_prompt(
    *,
    instruction: str | None = None,
    multi_thread: bool = False,
    inline_extractors: Sequence[tuple[str, str]] = (),
) -> str:
    """The Reflector's system prompt; it embeds the Observer's rules so both speak one format."""
    parts = [
        (
            "You are the memory of an AI assistant, rewriting its observation log. The log you write "
            "REPLACES the old one entirely and will be the assistant's whole memory: leave nothing "
            "important out.\n"
        ),
        "<observational-memory-instruction>\n"
        + EXTRACTION_RULES
        + "\n"
        + OUTPUT_FORMAT
        + "\n"
        + GUIDELINES
        + "</observational-memory-instruction>\n",
        (
            "YOUR JOB\n"
            '- Reorganise and streamline: combine related lines ("Assistant viewed config.py 5 times '
            'while fixing the port"), connect cause and effect, notice where the assistant went off '
            "track and what got it back.\n"
            "- Keep dates, (HH:MM) times and (meaning …) dates; keep every ✅ with its concrete outcome.\n"
            "- Condense older material more than recent material; the newest lines keep their detail.\n"
            "- What the user asserted outranks what they asked or what the assistant suggested; when a "
            "fact changed, keep the latest value and say it replaced the earlier one.\n"
            "- Never drop a 🔴 fact the user stated about themselves unless a later line supersedes it.\n"
        ),
    ]
    if multi_thread:
        parts.append(
            'The log has <thread id="…"> sections. Keep a thread\'s section where the context '
            "matters to that thread; move facts that hold everywhere (who the user is, lasting "
            "preferences) out into plain lines.\n"
        )
    parts.append(
        "Output only <observations>…</observations> (Date: groups, priority emojis), optionally "
        "followed by <suggested-response>…</suggested-response>.\n"
    )
    for slug, text in inline_extractors:
        parts.append(f"Also output <{slug}>…</{slug}>: {text}\n")
    if instruction:
        parts.append(f"=== CUSTOM INSTRUCTIONS ===\n{instruction}\n")
    return "\n".join(parts)


def reflector_user_prompt(
    *,
    observations: str,
    target_tokens: int,
    input_tokens: int,
    level: int,
    guidance: str | None = None,
    skip_hints: bool = True,
) -> str:
    """The Reflector's user message, with the compression target and the level's guidance."""
    out = [
        (
            f"{REFLECTION_HEADER}\n\n{observations}\n\n---\n\n"
            "Rewrite these observations into a refined, condensed log that will be the assistant's "
            "entire memory from now on.\n"
        ),
    ]
    if guidance:
        out.append(f"## SPECIFIC GUIDANCE\n\n{guidance}\n")
    out.append(
        "## COMPRESSION TARGET\n"
        f"Keep the whole output under {target_tokens} tokens (the input is {input_tokens} tokens).\n"
    )
    text = COMPRESSION_GUIDANCE.get(level, COMPRESSION_GUIDANCE[4])
    if text:
        out.append(text + "\n")
    if skip_hints:
        out.append("Output only the <observations> section; no <current-task> section.\n")
    return "\n".join(out)


CONTEXT_PROMPT = (
    "The observations below are your memory of earlier conversations with this user. They "
    "replace messages that are no longer shown."
)

CONTEXT_INSTRUCTIONS = """\
How to use this memory:
- Use the specific details you remember; personalise your answers and connect them to what the
  user told you before. Avoid generic advice when you know better.
- Newer observations supersede older ones. For questions about the current state of something,
  prefer the most recent information; watch for "will start", "switched to", "changed to",
  "moved to".
- A planned action whose date has passed (see the relative dates) has probably happened, unless
  something says otherwise.
- The user's most recent message is the most important signal.
- Text inside <system-reminder> is guidance for you, not something the user said."""

CONTINUATION_REMINDER = (
    "<system-reminder>Earlier messages of this conversation are summarised in your memory above. "
    "Continue naturally and answer the latest message; do not mention memory, summaries or missing "
    "messages. Follow the suggested response if there is one. Any messages after this reminder are "
    "newer and take priority.</system-reminder>"
)
