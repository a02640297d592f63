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

The reference rebuilds and recounts every candidate (quadratic). Here candidates are costed
from prefix sums of per-line counts (O(n log n)), and only lines that can belong to a fitting
candidate are counted at all (see ``_Window``); this relies on the counter being additive over
lines joined by "\n", which holds for tokenx (whitespace costs 0 and always ends a segment). The
chosen text is re-counted at the end, and a non-additive counter falls back to the reference's
direct search.
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
    text = truncate_to_budget(observations, budget, count=count)
    return text, text is not observations


def truncate_to_budget(observations: str, budget: int, *, count: TokenCounter = _estimate_token_count) -> str:
    """Cut *observations* to at most *budget* tokens with the selection rule in the module docstring.

    Text that already fits is returned unchanged (the same object); a budget of 0 gives "".
    """
    if budget <= 0:
        return ""
    if count is not _estimate_token_count and count(observations) <= budget:
        return observations
    window = _Window(observations.split("\n"), count, budget)
    if window.tail_floor == 0 and count is _estimate_token_count:  # tokenx is additive: it all fits
        return observations
    choice = window.best_choice()
    text = window.render(*choice) if choice else truncation_marker(window.n)
    if count(text) <= budget:
        return text
    return window.reference_search()


class _Window:
    """The per-line costs of one log that a fitting candidate can involve, and their prefix sums.

    Costs are non-negative, so no candidate can fit with a tail that alone exceeds the budget, or
    with important head lines older than those that alone exceed it. Lines are therefore counted
    from the newest end back to those two limits only: an Observer call costs O(budget), not
    O(log size), in token counting and in the scan for 🔴/✅ lines (the log is still split once).
    """

    def __init__(self, lines: list[str], count: TokenCounter, budget: int) -> None:
        self.lines = lines
        self.count = count
        self.budget = budget
        self.n = len(lines)
        self._tokens: dict[int, int] = {}
        self._marker_costs: dict[int, int] = {}
        # suffix costs of the tails that fit: _suffix[t - tail_floor] = cost of lines t..n-1
        suffix = [0]
        start = self.n
        while start > 0 and suffix[-1] + self.tokens(start - 1) <= budget:
            suffix.append(suffix[-1] + self.tokens(start - 1))
            start -= 1
        self.tail_floor = start
        self._suffix = suffix[::-1]
        # The important lines a candidate can keep: all those from the first tail that fits on,
        # and, walking back from there, those that fit the budget together; the first one that
        # does not fit ends the walk (it and every older line would overflow the budget with the
        # newer ones). ``important`` holds only these (older important lines are never looked at,
        # so the scan stays O(budget)).
        pivot = max(1, start)
        older: list[int] = []
        spent = 0
        for index in range(pivot - 1, -1, -1):
            if _is_important(lines[index]):
                cost = self.tokens(index)
                if spent + cost > budget:
                    break
                spent += cost
                older.append(index)
        older.reverse()
        self.important = window = older + [i for i in range(pivot, self.n) if _is_important(lines[i])]
        self._important_prefix = list(accumulate((self.tokens(i) for i in window), initial=0))
        gaps = [0] + [self.gap_cost(window[j - 1] + 1, window[j] - window[j - 1] - 1) for j in range(1, len(window))]
        self._gap_prefix = list(accumulate(gaps))

    def tokens(self, index: int) -> int:
        cost = self._tokens.get(index)
        if cost is None:
            cost = self._tokens[index] = self.count(self.lines[index])
        return cost

    def suffix(self, tail_start: int) -> int:
        return self._suffix[tail_start - self.tail_floor]

    def ceiling(self, tail_start: int, heads: int) -> int:
        """The most important head lines a candidate with this tail could keep."""
        return min(heads, self.n - tail_start)

    def gap_cost(self, start: int, hidden: int) -> int:
        if hidden <= 0:
            return 0
        if hidden == 1:
            return self.tokens(start)
        if hidden not in self._marker_costs:
            self._marker_costs[hidden] = self.count(truncation_marker(hidden))
        return self._marker_costs[hidden]

    def content_cost(self, tail_start: int, heads: int, keep: int) -> int:
        return self.suffix(tail_start) + self._important_prefix[heads] - self._important_prefix[heads - keep]

    def full_cost(self, tail_start: int, heads: int, keep: int) -> int:
        cost = self.content_cost(tail_start, heads, keep)
        if keep == 0:
            return cost + self.gap_cost(0, tail_start)
        first, last = heads - keep, heads - 1
        cost += self.gap_cost(0, self.important[first])
        cost += self._gap_prefix[last] - self._gap_prefix[first]
        return cost + self.gap_cost(self.important[last] + 1, tail_start - self.important[last] - 1)

    def best_choice(self) -> tuple[int, int] | None:
        """(tail_start, kept important lines) of the winning candidate, or None."""
        best: tuple[int, int] | None = None
        best_keep = -1
        for tail_start in range(max(1, self.tail_floor), self.n):
            heads = bisect_right(self.important, tail_start - 1)
            ceiling = self.ceiling(tail_start, heads)
            if ceiling <= best_keep:
                continue
            low, high = 0, ceiling
            while low < high:
                middle = (low + high + 1) // 2
                if self.content_cost(tail_start, heads, middle) <= self.budget:
                    low = middle
                else:
                    high = middle - 1
            if low > best_keep and self.full_cost(tail_start, heads, low) <= self.budget:
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

    def reference_search(self) -> str:
        """The reference's direct search, recounting every candidate (for non-additive counters)."""
        best_text: str | None = None
        best_keep = -1
        for tail_start in range(max(1, self.tail_floor), self.n):
            heads = bisect_right(self.important, tail_start - 1)
            keep = self.ceiling(tail_start, heads)
            while keep > 0 and self.content_cost(tail_start, heads, keep) > self.budget:
                keep -= 1
            if keep <= best_keep:
                continue
            text = self.render(tail_start, keep)
            if self.count(text) <= self.budget:
                best_text, best_keep = text, keep
        return best_text if best_text is not None else truncation_marker(self.n)
