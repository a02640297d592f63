"""Generation.carriers_of finds, for each tracked line, what the matching rule in omlab.bench.lineage.lines says."""

from __future__ import annotations

from omlab.bench.lineage.lines import CARRIES_SHARE, Generation, log_lines, words

LOG = """Date: May 3, 2024
<observations>
* 🔴 (14:30) User moved to İstanbul in March 2024 with their dog Biscuit
* 🟡 (09:05) User's SISTER MARA works at a BAKERY on 5th Avenue
- User plans a trip to Kyoto in autumn, budget 3000 dollars
1. User bought a blue bicycle
* 🟢 User bought a blue bicycle
  * Biscuit is a beagle, 4 years old
* User asked about the weather
--- message boundary ---
* (2:15 PM) user is learning Portuguese on weekends
</observations>
"""

TRACKED = [
    "* 🔴 (14:30) User moved to İstanbul in March 2024 with their dog Biscuit",  # still there
    "* 🔴 (11:00) User relocated to istanbul in march 2024 with dog biscuit",  # rewritten: istanbul, dog…
    "* 🟡 User's sister Mara has a bakery",  # case differs from the log's
    "* User plans a Kyoto trip in the autumn with a 3000 budget",
    "* 🟢 (08:00) User bought a bicycle, a blue one",
    "* User's beagle Biscuit turned 4",
    "* User is learning Portuguese",
    "* User enjoys sailing in Norway",  # gone
    "* User asked about it",  # only stop-words: no words, no carrier
    "* User asked about the weather",  # still there
    "* (14:30) 2024",  # numbers are words
]


def _by_definition(generation_lines: list[str], tracked: str) -> list[str]:
    """The rule of the module docstring over every line, without any index or shortcut."""
    if tracked in generation_lines:
        return [tracked]
    tracked_words = words(tracked)
    if not tracked_words:
        return []
    shared = {line: len(words(line) & tracked_words) for line in set(generation_lines)}
    best = [line for line, count in shared.items() if count and count >= CARRIES_SHARE * len(tracked_words)]
    return sorted(best, key=lambda line: (-shared[line], line))[:1]


def test_carriers_of_is_the_rule_applied_to_every_line():
    lines = log_lines(LOG)
    assert "* 🟢 User bought a blue bicycle" in lines and not any(line.startswith("Date") for line in lines)
    generation = Generation(lines)
    found = generation.carriers_of(TRACKED + TRACKED[:2])
    assert set(found) == set(TRACKED)
    for tracked in TRACKED:
        assert found[tracked] == _by_definition(lines, tracked), tracked
        assert generation.carriers(tracked) == found[tracked]
    assert found[TRACKED[1]] == [TRACKED[0]]
    assert found[TRACKED[2]] == ["* 🟡 (09:05) User's SISTER MARA works at a BAKERY on 5th Avenue"]
    assert found[TRACKED[7]] == [] and found[TRACKED[8]] == []
    assert found[TRACKED[10]] == [TRACKED[0]]
