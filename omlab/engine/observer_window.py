r"""The "Previous Observations" window shown to the Observer (om-reference §2.10).

The Observer only needs enough of the existing log to avoid repeating it, so the log is cut to
``previousObserverTokens`` (default 2,000). The cut keeps a raw tail of the newest lines plus as
many "important" older lines (🔴 or ✅) as fit, and marks what was hidden with
``[N observations truncated here]``.

Selection rule (the reference's, reproduced exactly): for every tail start ``t`` = 1 … n−1 (the
tail is lines ``t…n−1``) take the newest ``k`` important head lines, where ``k`` is the largest
value ≤ min(important head lines, tail length) whose *content* (tail + chosen lines) fits the
budget; the candidate text is then built (hidden runs → markers; a run of exactly one hidden
line keeps that line instead) and accepted if its full count fits and ``k`` beats the best so
far (a longer tail wins a tie, which in this scan order means the first fitting candidate of a
given ``k`` wins). If no candidate fits, the window is the single marker for all lines.

The reference rebuilds and recounts every candidate (quadratic). Here every line is counted
once and candidates are costed from prefix sums (O(n log n)); this relies on the counter being
additive over lines joined by "\n", which holds for tokenx (whitespace costs 0 and always ends a
segment). The chosen text is re-counted at the end, and a non-additive counter falls back to the
reference's direct search.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

TokenCounter = Callable[[str], int]


def _estimate_token_count(text: str) -> int:
    # Imported lazily so this module loads before (and without) the estimator module.
    from omlab.tokens.tokenx import estimate_line_cached, estimate_token_count_cached

    return estimate_line_cached(text) if "\n" not in text else estimate_token_count_cached(text)


def truncation_marker(hidden: int) -> str:
    """The line that stands for *hidden* observation lines cut from the Observer's window."""
    return f"[{hidden} observations truncated here]"


def _is_important(line: str) -> bool:
    return "🔴" in line or "✅" in line


def prepare_previous_observations(
    active: str,
    *,
    budget: int | None,
    buffered_reflection: str | None = None,
    reflected_line_count: int = 0,
    count: TokenCounter = _estimate_token_count,
) -> tuple[str, bool]:
    """Build the previous-observations text for an Observer call.

    Args:
        active: the record's ``activeObservations``.
        budget: ``previousObserverTokens``. None (the option set to ``false``) returns *active*
            unchanged, as the reference does (no reflection swap, no cut). 0 returns "" (marked
            truncated when there was anything to show).
        buffered_reflection: a background reflection not yet activated.
        reflected_line_count: how many leading lines of *active* that reflection covers; the
            swap happens only when it is > 0 and the reflection is non-empty.
        count: token counter (tokenx by default).

    Returns:
        ``(text, truncated)``; *truncated* tells the prompt to add its "observations were
        truncated" notice.

    Raises:
        ValueError: a negative budget or line count.
    """
    if budget is not None and budget < 0:
        raise ValueError(f"previousObserverTokens budget must be >= 0 or None, got {budget}")
    if reflected_line_count < 0:
        raise ValueError(f"reflected_line_count must be >= 0, got {reflected_line_count}")
    if budget is None:
        return active, False
    observations = active
    if buffered_reflection and reflected_line_count > 0:
        unreflected = "\n".join(active.split("\n")[reflected_line_count:]).strip()
        observations = f"{buffered_reflection}\n\n{unreflected}" if unreflected else buffered_reflection
    if not observations:
        return "", False
    if budget == 0:
        return "", True
    if count(observations) <= budget:
        return observations, False
    return truncate_to_budget(observations, budget, count=count), True


def truncate_to_budget(observations: str, budget: int, *, count: TokenCounter = _estimate_token_count) -> str:
    """Cut *observations* to at most *budget* tokens with the selection rule in the module docstring.

    Text that already fits is returned unchanged; a budget of 0 gives "".
    """
    if budget <= 0:
        return ""
    if count(observations) <= budget:
        return observations
    window = _Window(observations.split("\n"), count)
    choice = window.best_choice(budget)
    text = window.render(*choice) if choice else truncation_marker(len(window.lines))
    if count(text) <= budget:
        return text
    return window.reference_search(budget)


class _Window:
    """Per-line costs and prefix sums of one log, shared by every candidate."""

    def __init__(self, lines: list[str], count: TokenCounter) -> None:
        self.lines = lines
        self.count = count
        self.n = len(lines)
        self.tokens = [count(line) for line in lines]
        self._marker_costs: dict[int, int] = {}
        self.suffix = list(accumulate(reversed(self.tokens), initial=0))[::-1]
        self.important = [i for i, line in enumerate(lines) if _is_important(line)]
        self.important_prefix = list(accumulate((self.tokens[i] for i in self.important), initial=0))
        # gap_prefix[j] = cost of the hidden runs between consecutive important lines 0..j.
        gaps = [0] + [
            self.gap_cost(self.important[j - 1] + 1, self.important[j] - self.important[j - 1] - 1)
            for j in range(1, len(self.important))
        ]
        self.gap_prefix = list(accumulate(gaps))

    def gap_cost(self, start: int, hidden: int) -> int:
        if hidden <= 0:
            return 0
        if hidden == 1:
            return self.tokens[start]
        if hidden not in self._marker_costs:
            self._marker_costs[hidden] = self.count(truncation_marker(hidden))
        return self._marker_costs[hidden]

    def content_cost(self, tail_start: int, heads: int, keep: int) -> int:
        return self.suffix[tail_start] + self.important_prefix[heads] - self.important_prefix[heads - keep]

    def full_cost(self, tail_start: int, heads: int, keep: int) -> int:
        cost = self.content_cost(tail_start, heads, keep)
        if keep == 0:
            return cost + self.gap_cost(0, tail_start)
        first, last = heads - keep, heads - 1
        cost += self.gap_cost(0, self.important[first])
        cost += self.gap_prefix[last] - self.gap_prefix[first]
        return cost + self.gap_cost(self.important[last] + 1, tail_start - self.important[last] - 1)

    def best_choice(self, budget: int) -> tuple[int, int] | None:
        """(tail_start, kept important lines) of the winning candidate, or None."""
        best: tuple[int, int] | None = None
        best_keep = -1
        for tail_start in range(1, self.n):
            heads = bisect_right(self.important, tail_start - 1)
            ceiling = min(heads, self.n - tail_start)
            if ceiling <= best_keep or self.content_cost(tail_start, heads, 0) > budget:
                continue
            low, high = 0, ceiling
            while low < high:
                middle = (low + high + 1) // 2
                if self.content_cost(tail_start, heads, middle) <= budget:
                    low = middle
                else:
                    high = middle - 1
            if low > best_keep and self.full_cost(tail_start, heads, low) <= budget:
                best, best_keep = (tail_start, low), low
        return best

    def render(self, tail_start: int, keep: int) -> str:
        heads = bisect_right(self.important, tail_start - 1)
        kept = self.important[heads - keep : heads] + list(range(tail_start, self.n))
        output: list[str] = []
        previous = -1
        for index in kept:
            hidden = index - previous - 1
            if hidden == 1:
                output.append(self.lines[previous + 1])
            elif hidden > 1:
                output.append(truncation_marker(hidden))
            output.append(self.lines[index])
            previous = index
        return "\n".join(output)

    def reference_search(self, budget: int) -> str:
        """The reference's direct search, recounting every candidate (for non-additive counters)."""
        best_text: str | None = None
        best_keep = -1
        for tail_start in range(1, self.n):
            heads = bisect_right(self.important, tail_start - 1)
            keep = min(heads, self.n - tail_start)
            while keep > 0 and self.content_cost(tail_start, heads, keep) > budget:
                keep -= 1
            if self.content_cost(tail_start, heads, keep) > budget or keep <= best_keep:
                continue
            text = self.render(tail_start, keep)
            if self.count(text) <= budget:
                best_text, best_keep = text, keep
        return best_text if best_text is not None else truncation_marker(self.n)
