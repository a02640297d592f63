"""``omlab/observer``: a deterministic extractive observer (a baseline, not a language model).

It reads the engine's Observer request (see ``transcript_parser``), keeps the most informative
sentences of every message within a per-role word budget, labels each line with a priority emoji,
a 24-hour time and a resolved ``(meaning DATE)`` for relative date phrases, and writes the
reference observation format. The rules are listed in ``README.md`` beside this module.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from omlab.llm.offline.base import OfflineResult, message_text
from omlab.llm.offline.date_phrases import format_day, has_date_phrase, meaning_suffix
from omlab.llm.offline.memo import line_memo
from omlab.llm.offline.transcript_parser import (
    Entry,
    ObserverRequest,
    PriorMetadata,
    ThreadHistory,
    message_pieces,
    parse_observer_request,
    strip_markdown,
)
from omlab.llm.types import ChatMessage
from omlab.tokens.tokenx import estimate_token_count_cached as estimate_token_count

USER_WORD_BUDGET = 40
ASSISTANT_WORD_BUDGET = 25
MINOR_WORD_BUDGET = 15
LIST_ITEM_LIMIT = 8
TOOL_STEP_LIMIT = 6

RED, YELLOW, GREEN, DONE = "🔴", "🟡", "🟢", "✅"
_MAX_WORD_CHARS = 15  # caps a kept sentence at budget × 15 characters (pasted blobs have no spaces)

_KEY_PREFIX_RE = re.compile(
    r"^\s*(?:[*\-•]|\d+[.)])?\s*(?:->\s*)?(?:🔴|🟡|🟢|✅)?\s*(?:\(\d{1,2}:\d{2}(?:\s?[AaPp][Mm])?\))?\s*"
)
_NON_WORD_RE = re.compile(r"[\W_]+")
_BOLD_HEAD_RE = re.compile(r"^\*\*(?P<head>[^*]{1,80})\*\*")
_DIGIT_RE = re.compile(r"\d")
_FIRST_PERSON_RE = re.compile(r"\b(?:I|I'm|I’m|I've|I’ve|I'd|I’d|I'll|I’ll|my|me|mine|myself)\b")
_PREFERENCE_RE = re.compile(
    r"\b(?:love|loves|prefer|prefers|favou?rite|hate|hates|dislike|allergic|always|never|enjoy)\b",
    re.IGNORECASE,
)
_MONTH_OR_DAY_RE = re.compile(
    r"\b(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:tember)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b"
)
_QUESTION_START_RE = re.compile(
    r"^(?:so |and |but |also |ok(?:ay)?,? )?(?:what|how|why|when|where|which|who|whose|"
    r"can you|could you|would you|will you|do you|is there|are there)\b",
    re.IGNORECASE,
)
_REQUEST_RE = re.compile(
    r"^(?:please,? )?(?P<verb>help|find|write|give|show|tell|recommend|suggest|explain|create|make|list|"
    r"plan|book|check|compare|draft|summari[sz]e|translate|fix|remind|add|remove|update|send|look up)\b",
    re.IGNORECASE,
)
_INTENT_LEADS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(r"^(?:so |and |but |also |well |actually |now )?" + pattern + r"\b\s*", re.IGNORECASE), lead)
    for pattern, lead in (
        (r"(?:i|we)(?:'d|’d| would) (?:really )?(?:like|love)", "wants "),
        (r"(?:i|we) (?:really )?(?:want|wanna)", "wants "),
        (r"(?:i|we) (?:really )?need", "needs "),
        (r"(?:i|we) hope", "hopes "),
        (r"(?:i(?:'m|’m| am)|we(?:'re|’re| are)) planning", "plans "),
        (r"(?:i(?:'m|’m| am)|we(?:'re|’re| are)) going", "is going "),
        (r"(?:i|we) plan", "plans "),
        (r"(?:i|we)(?:'ll|’ll| will)", "plans to "),
        (r"(?:i(?:'m|’m| am)|we(?:'re|’re| are)) looking", "is looking "),
        (r"(?:i(?:'m|’m| am)|we(?:'re|’re| are)) trying", "is trying "),
        (r"(?:i(?:'m|’m| am)|we(?:'re|’re| are)) thinking", "is thinking "),
        (r"(?:i(?:'m|’m| am)|we(?:'re|’re| are)) hoping", "hopes "),
    )
)
_DONE_RE = re.compile(
    r"\b(?:(?:that|it|this) (?:worked|works|did it|did the trick|fixed it|solved it|helped)"
    r"|it(?:'s|’s| is)? (?:working|works)(?: now)?|works (?:now|great|perfectly|fine)"
    r"|problem solved|issue (?:is )?(?:solved|fixed|resolved)|all (?:good|set) now)\b",
    re.IGNORECASE,
)
_SHORT_DONE_RE = re.compile(r"\b(?:done|solved|fixed|resolved|sorted|finished)\b", re.IGNORECASE)
_NEGATION_RE = re.compile(r"\b(?:not|never|still|but|however|error|fails?|failed|broken)\b|n't|n’t", re.IGNORECASE)
_THIRD_PERSON = (
    (re.compile(r"\bI(?:'m|’m)\b"), "they're"),
    (re.compile(r"\bI am\b"), "they are"),
    (re.compile(r"\bI was\b"), "they were"),
    (re.compile(r"\bI(?:'ve|’ve)\b"), "they've"),
    (re.compile(r"\bI(?:'d|’d)\b"), "they'd"),
    (re.compile(r"\bI(?:'ll|’ll)\b"), "they'll"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "themselves"),
    (re.compile(r"\bmine\b"), "theirs"),
    (re.compile(r"\b[Mm]y\b"), "their"),
    (re.compile(r"\bme\b"), "them"),
)
# fmt: off
_LOWER_FIRST_WORDS = frozenset({
    "they", "they're", "they've", "they'd", "they'll", "their", "theirs", "them", "the", "a", "an",
    "it", "it's", "this", "that", "there", "these", "those", "we", "our", "yes", "no", "also", "so",
    "and", "but", "actually", "just", "well", "oh", "anyway", "can", "could", "would", "will", "do",
    "does", "is", "are", "what", "how", "why", "when", "where", "which", "who", "should"
})
_SMALLTALK = frozenset({
    "hi", "hello", "hey", "hiya", "thanks", "thank", "you", "ty", "thx", "so", "much", "very", "a",
    "lot", "again", "for", "the", "help", "ok", "okay", "k", "cool", "great", "nice", "awesome", "got",
    "it", "sure", "yes", "yeah", "yep", "yup", "no", "nope", "bye", "goodbye", "good", "morning",
    "evening", "night", "afternoon", "lol", "haha", "alright", "right", "sounds", "i", "see", "oh",
    "ah", "wow", "that", "s", "is", "helpful", "interesting", "appreciate", "will", "do", "np"
})
# fmt: on
_SENTENCE_START_RE = re.compile(r"(?:(?<=[.!?] )|(?<=[.!?] … ))[a-z]")
_FILLER_RE = re.compile(
    r"^(?:would you like|do you want|let me know|feel free|i hope|hope this|is there anything|"
    r"if you (?:have|need|want)|(?:i'd|i would|i'm|i am) (?:be )?(?:happy|glad) to|happy to help|"
    r"great question|good question|that(?:'s| is) (?:a )?(?:great|lovely|good|wonderful|nice)|"
    r"sure[!,.]|certainly[!,.]|of course[!,.]|absolutely[!,.])",
    re.IGNORECASE,
)


@line_memo
def observation_key(line: str) -> str:
    """The comparison key of an observation line: no bullet, emoji or time; casefolded words only."""
    return _NON_WORD_RE.sub(" ", _KEY_PREFIX_RE.sub("", line).casefold()).strip()


class OfflineObserver:
    """The extractive observer addressable as ``omlab/observer``."""

    name = "observer"

    def generate(
        self,
        messages: list[ChatMessage],
        *,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
    ) -> OfflineResult:
        """Observe the history in the (last) user message; ``max_output_tokens``/``temperature``
        are accepted for interface parity and ignored (the output is already bounded)."""
        user_texts = [message_text(m) for m in messages if m.get("role") == "user"]
        if not user_texts:
            raise ValueError("observer request has no user message")
        text = observe(parse_observer_request(user_texts[-1]))
        input_tokens = sum(estimate_token_count(message_text(m)) for m in messages)
        return OfflineResult(text, input_tokens, estimate_token_count(text))


def observe(request: ObserverRequest) -> str:
    """The observer output (``<observations>`` plus continuation hints) for a parsed request."""
    seen = {observation_key(line) for line in request.previous_observations.splitlines()}
    seen.discard("")
    if not request.multi_thread:
        history = request.threads[0] if request.threads else ThreadHistory(None, ())
        body, hints = _observe_thread(history, request.prior, seen)
        return "\n".join(["<observations>", *body, "</observations>", *hints])
    out = ["<observations>"]
    for thread in request.threads:
        if not thread.entries:
            continue
        prior = request.prior_by_thread.get(thread.thread_id or "", PriorMetadata())
        body, hints = _observe_thread(thread, prior, seen)
        out += [f'<thread id="{thread.thread_id}">', *body, *hints, "</thread>"]
    return "\n".join([*out, "</observations>"])


@dataclass(slots=True)
class _Line:
    emoji: str
    minutes: int | None
    text: str
    children: list[str] = field(default_factory=list)
    kind: str = "other"  # stated | wants | asked | requested | done | smalltalk | assistant | tool | other
    sentence_keys: list[str] = field(default_factory=list)
    """Keys of the single-sentence lines this line covers, so later repeats are skipped."""

    def render(self) -> list[str]:
        clock = "" if self.minutes is None else f"({self.minutes // 60:02d}:{self.minutes % 60:02d}) "
        return [f"* {self.emoji} {clock}{self.text}", *(f"  * -> {child}" for child in self.children)]


@dataclass(slots=True)
class _TaskState:
    open_requests: list[str] = field(default_factory=list)
    completed: str | None = None
    last_kind: str | None = None


def _observe_thread(thread: ThreadHistory, prior: PriorMetadata, seen: set[str]) -> tuple[list[str], list[str]]:
    body: list[str] = []
    state = _TaskState()
    current_day = None
    owner = "User"
    entries = thread.entries
    index = 0
    while index < len(entries):
        entry = entries[index]
        if entry.role.startswith("Tool "):
            end = index
            while end < len(entries) and entries[end].role.startswith("Tool ") and entries[end].day == entry.day:
                end += 1
            lines = [_tool_line(entries[index:end])]
            state.last_kind = "tool"
            index = end
        else:
            lines = _entry_lines(entry, owner, state, seen)
            if entry.role in ("User", "Assistant"):
                owner = entry.role
            index += 1
        for line in lines:
            key = observation_key(line.text)
            if key in seen:
                continue
            seen.add(key)
            seen.update(line.sentence_keys)
            if entry.day != current_day:
                current_day = entry.day
                body.append(f"Date: {format_day(entry.day)}")
            body += line.render()
    return body, _hints(state, prior) if entries else []


def _entry_lines(entry: Entry, owner: str, state: _TaskState, seen: set[str]) -> list[_Line]:
    if entry.role == "User":
        lines = _user_lines(entry, state, seen)
        state.last_kind = lines[-1].kind if lines else state.last_kind
        return lines
    state.last_kind = "assistant" if entry.role in ("Assistant", "Reasoning") else state.last_kind
    if entry.role == "Assistant":
        return _assistant_lines(entry)
    if entry.role == "Reasoning":
        return [_Line(GREEN, entry.minutes, "Assistant reasoned: " + _clip(_flatten(entry.text), MINOR_WORD_BUDGET))]
    if entry.role == "System-reminder":
        text = "System reminder (not from the user): " + _clip(_flatten(entry.text), MINOR_WORD_BUDGET)
        return [_Line(GREEN, entry.minutes, text)]
    if entry.role in ("Image", "File"):
        return [_Line(YELLOW, entry.minutes, f"{owner} shared {_clip(_flatten(entry.text), MINOR_WORD_BUDGET)}")]
    text = _compress(entry.text, ASSISTANT_WORD_BUDGET, _assistant_score)
    return [_Line(YELLOW, entry.minutes, f"{entry.role}: {text}")] if text else []


# --- user messages ----------------------------------------------------------------------------


def _user_lines(entry: Entry, state: _TaskState, seen: set[str]) -> list[_Line]:
    sentences = [s for s, _ in message_pieces(entry.text)]
    if not sentences:
        return []
    kinds = [_user_kind(s) for s in sentences]
    if all(kind == "smalltalk" for kind in kinds):
        said = _clip(" ".join(sentences), 12)
        return [_Line(GREEN, entry.minutes, f"User said: {said}", kind="smalltalk")]
    fresh = [
        (i, s)
        for i, s in enumerate(sentences)
        if kinds[i] not in ("smalltalk", "done") and not _already_observed(kinds[i], s, entry, seen)
    ]
    chosen = _select(fresh, USER_WORD_BUDGET, _user_score)
    groups: dict[str, list[int]] = {}
    for i in sorted([i for i, kind in enumerate(kinds) if kind == "done"] + chosen):
        groups.setdefault(kinds[i], []).append(i)
    lines = []
    for kind, indices in groups.items():
        text = _join_selected(sentences, indices, USER_WORD_BUDGET)
        if kind == "done":
            lines.append(_done_line(entry, text, state))
            continue
        line = _Line(_user_priority(kind, text), entry.minutes, _user_text(kind, text), kind=kind)
        line.text += meaning_suffix(line.text, entry.day)
        line.sentence_keys = [observation_key(_user_text(kind, sentences[i])) for i in indices]
        lines.append(line)
        if kind in ("wants", "asked", "requested"):
            state.open_requests = [*state.open_requests[-1:], line.text]
    return lines


def _already_observed(kind: str, sentence: str, entry: Entry, seen: set[str]) -> bool:
    """True when this sentence alone would render a line that Previous Observations already hold."""
    text = _user_text(kind, sentence)
    return observation_key(text) in seen or observation_key(text + meaning_suffix(text, entry.day)) in seen


def _user_kind(sentence: str) -> str:
    words = _NON_WORD_RE.sub(" ", sentence.casefold().replace("’", "'")).split()
    if words and len(words) <= 8 and all(w in _SMALLTALK for w in words):
        return "smalltalk"
    if not sentence.rstrip().endswith("?") and not _NEGATION_RE.search(sentence):
        if _DONE_RE.search(sentence) and len(words) <= 20:
            return "done"
        if len(words) <= 4 and _SHORT_DONE_RE.search(sentence):
            return "done"
    if sentence.rstrip().endswith("?") or _QUESTION_START_RE.match(sentence):
        return "asked"
    if _REQUEST_RE.match(sentence):
        return "requested"
    if any(pattern.match(sentence) for pattern, _ in _INTENT_LEADS):
        return "wants"
    return "stated"


def _user_text(kind: str, text: str) -> str:
    if kind == "asked":
        return "User asked: " + _lower_first(text)
    if kind == "requested":
        request = re.sub(r"^please,? ", "", text, flags=re.IGNORECASE)
        return "User asked the assistant to " + request[:1].lower() + _third_person(request[1:])
    if kind == "wants":
        for pattern, lead in _INTENT_LEADS:
            match = pattern.match(text)
            if match is not None:
                return "User " + lead + _third_person(text[match.end() :])
    return "User stated " + _lower_first(_third_person(text))


def _user_priority(kind: str, text: str) -> str:
    if kind != "stated":
        return RED
    informative = (
        _FIRST_PERSON_RE.search(text)
        or _DIGIT_RE.search(text)
        or _proper_nouns(text)
        or _PREFERENCE_RE.search(text)
        or has_date_phrase(text)
        or _MONTH_OR_DAY_RE.search(text)
    )
    return RED if informative else YELLOW


def _done_line(entry: Entry, text: str, state: _TaskState) -> _Line:
    resolved = state.open_requests.pop() if state.open_requests else None
    state.completed = resolved or "the previous request"
    said = _clip(text, 12)
    suffix = f" — the request: {_clip(resolved, 20)}" if resolved else ""
    return _Line(DONE, entry.minutes, f'User confirmed it is done ("{said}"){suffix}', kind="done")


def _user_score(sentence: str) -> float:
    score = 0.0
    if _FIRST_PERSON_RE.search(sentence):
        score += 2
    if _DIGIT_RE.search(sentence):
        score += 2
    if has_date_phrase(sentence) or _MONTH_OR_DAY_RE.search(sentence):
        score += 2
    if _PREFERENCE_RE.search(sentence):
        score += 1
    if sentence.rstrip().endswith("?"):
        score += 1.5
    return score + min(_proper_nouns(sentence), 3)


# --- assistant messages and tools ---------------------------------------------------------------


def _assistant_lines(entry: Entry) -> list[_Line]:
    return [_Line(YELLOW, entry.minutes, text, kind="assistant") for text in _assistant_texts(entry.text, entry.day)]


@functools.lru_cache(maxsize=16_384)
def _assistant_texts(message: str, day: date) -> tuple[str, ...]:
    # memoised: the same reply is observed again in every configuration a sweep replays
    pieces = message_pieces(message)
    items = [_item_head(s) for s, is_item in pieces if is_item]
    first_item = next((i for i, (_, is_item) in enumerate(pieces) if is_item), len(pieces))
    prose = [s for s, is_item in pieces if not is_item]
    useful = [(i, s) for i, s in enumerate(prose) if not _FILLER_RE.match(s)] or list(enumerate(prose))
    budget = ASSISTANT_WORD_BUDGET - (5 if items else 0)
    before = sum(1 for s, is_item in pieces[:first_item] if not is_item)
    # The sentence that leads into a list says what the list is.
    lead_in = {before - 1: 3.0} if items and before else {}
    chosen = _select(useful, budget, _assistant_score, lead_in)
    intro = _join_selected(prose, [i for i in chosen if i < before], budget)
    outro = _join_selected(prose, [i for i in chosen if i >= before], budget)
    text = intro
    if items:
        unique = list(dict.fromkeys(items))
        listed = "; ".join(unique[:LIST_ITEM_LIMIT]) + ("; …" if len(unique) > LIST_ITEM_LIMIT else "")
        text = f"{intro.rstrip(':.!')}: {listed}" if intro else listed
    text = f"{text} — {outro}" if text and outro else text or outro
    if not text:
        return ()
    return (_assistant_lead(text) + meaning_suffix(text, day),)


def _assistant_lead(text: str) -> str:
    for pattern, lead in (
        (r"^(?:here are|here's|here is|here’s)\s+", "Assistant suggested "),
        (r"^(?:i(?:'d|’d| would) )?(?:recommend|suggest)(?:ing)?\s+", "Assistant recommended "),
        (r"^i(?:'ve|’ve| have)\s+(?=\w+ed\b)", "Assistant "),
    ):
        match = re.match(pattern, text, re.IGNORECASE)
        if match is not None:
            return lead + text[match.end() :]
    return "Assistant replied: " + text


def _assistant_score(sentence: str) -> float:
    score = 2.0 * bool(_DIGIT_RE.search(sentence)) + min(_proper_nouns(sentence), 3)
    score += 1.5 * bool(has_date_phrase(sentence) or _MONTH_OR_DAY_RE.search(sentence))
    return score - (3 if _FILLER_RE.match(sentence) else 0)


def _item_head(item: str) -> str:
    bold = _BOLD_HEAD_RE.match(item)
    if bold is not None:
        return bold.group("head").strip().rstrip(":")
    plain = strip_markdown(item)
    head = re.split(r":\s| [-–—] |\.\s", plain, maxsplit=1)[0]
    return _clip(head, 8)


def _tool_line(entries: list[Entry]) -> _Line:
    calls: list[list[str]] = []  # [tool, args, outcome]
    pending: dict[str, list[list[str]]] = {}
    for entry in entries:
        tool = entry.tool or "tool"
        if entry.role == "Tool Call":
            step = [tool, _clip(_flatten(entry.text), 12, 100), ""]
            calls.append(step)
            pending.setdefault(tool, []).append(step)
            continue
        queue = pending.get(tool)
        step = queue.pop(0) if queue else None
        if step is None:
            step = [tool, "", ""]
            calls.append(step)
        label = {"Tool Result": "", "Tool Error": "error: ", "Tool Denied": "denied: "}.get(entry.role, "")
        step[2] = label + _clip(_flatten(entry.text), 20, 160)
    first = entries[0]
    if len(calls) == 1:
        tool, args, outcome = calls[0]
        return _Line(
            YELLOW,
            first.minutes,
            f"Assistant called {tool} {args}".rstrip(),
            [outcome] if outcome else [],
            "tool",
        )
    counts: dict[str, int] = {}
    for tool, _, _ in calls:
        counts[tool] = counts.get(tool, 0) + 1
    names = ", ".join(f"{t} ×{n}" if n > 1 else t for t, n in counts.items())
    children = [f"{t} {a}: {o}" if o else f"{t} {a}".rstrip() for t, a, o in calls[:TOOL_STEP_LIMIT]]
    if len(calls) > TOOL_STEP_LIMIT:
        children.append(f"… {len(calls) - TOOL_STEP_LIMIT} more calls")
    return _Line(YELLOW, first.minutes, f"Assistant made {len(calls)} tool calls ({names})", children, "tool")


# --- extraction helpers -------------------------------------------------------------------------


def _select(
    candidates: list[tuple[int, str]],
    budget: int,
    score: Callable[[str], float],
    bonus: dict[int, float] | None = None,
) -> list[int]:
    """Indices of the best-scoring sentences that fit ``budget`` words (the first one is clipped).

    The opening sentence gets a small bonus because it usually states the topic; ``bonus`` adds
    more by index.
    """
    extra = dict(bonus or {})
    if candidates:
        extra[candidates[0][0]] = extra.get(candidates[0][0], 0.0) + 1.0
    ranked = sorted(candidates, key=lambda c: (-score(c[1]) - extra.get(c[0], 0.0), c[0]))
    chosen: list[int] = []
    used = 0
    for index, sentence in ranked:
        words = len(sentence.split())
        if used + words <= budget or not chosen:
            chosen.append(index)
            used += words
        if used >= budget:
            break
    return sorted(chosen)


def _compress(text: str, budget: int, score: Callable[[str], float]) -> str:
    sentences = [s for s, _ in message_pieces(text)]
    return _join_selected(sentences, _select(list(enumerate(sentences)), budget, score), budget)


def _join_selected(sentences: list[str], indices: list[int], clip_words: int) -> str:
    parts: list[str] = []
    previous = None
    for index in indices:
        if previous is not None and index != previous + 1:
            parts.append("…")
        parts.append(_clip(strip_markdown(sentences[index]), clip_words, clip_words * _MAX_WORD_CHARS))
        previous = index
    return " ".join(parts)


def _clip(text: str, words: int, chars: int | None = None) -> str:
    """``text`` cut to ``words`` words (and ``chars`` characters), marked with ``…`` when cut."""
    parts = text.split()
    clipped = " ".join(parts[:words])
    if chars is not None and len(clipped) > chars:
        clipped = clipped[:chars].rstrip()
    elif len(parts) <= words:
        return clipped
    return clipped + " …"


def _flatten(text: str) -> str:
    return " ".join(text.split())


def _proper_nouns(sentence: str) -> int:
    words = sentence.split()
    return sum(1 for word in words[1:] if word[:1].isupper() and word.strip(".,!?;:'\"") not in ("I", "I'm", "I've"))


def _third_person(text: str) -> str:
    """Rewrite the user's first person as "they"/"their", keeping sentence-initial capitals."""
    converted = text
    for pattern, replacement in _THIRD_PERSON:
        converted = pattern.sub(replacement, converted)
    return _SENTENCE_START_RE.sub(lambda m: m.group(0).upper(), converted)


def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    if first.casefold().strip(",.!?") in _LOWER_FIRST_WORDS:
        return text[:1].lower() + text[1:]
    return text


def _hints(state: _TaskState, prior: PriorMetadata) -> list[str]:
    if state.open_requests:
        task = f"Primary: the user's latest request — {state.open_requests[-1]}"
        if len(state.open_requests) > 1:
            task += f"\nSecondary: earlier request — {state.open_requests[0]}"
    elif state.completed is not None:
        task = f"Primary: none open — completed: {state.completed}; waiting for the user's next request"
    elif prior.current_task:
        task = prior.current_task
    else:
        task = "Primary: no open user request"
    if state.last_kind == "done":
        hint = "Acknowledge that it is done and ask whether the user needs anything else."
    elif state.last_kind in ("wants", "asked", "requested") and state.open_requests:
        hint = f"Answer the user's latest request directly: {_clip(state.open_requests[-1], 20)}"
    elif state.last_kind in ("assistant", "tool"):
        hint = "The assistant should wait for the user to respond before continuing."
    else:
        hint = "Continue the conversation naturally from the user's last message."
    return ["<current-task>", task, "</current-task>", "<suggested-response>", hint, "</suggested-response>"]
