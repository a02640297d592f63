"""``compat="reference"`` annotates dates exactly as @mastra/memory 1.31.0 (issue 20 item 9).

Each expected text is what 1.31.0's ``addRelativeTimeToObservations`` returned for the input
(run with node, ``TZ=UTC``, current date 2026-06-01T12:00Z).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from omlab.engine.context import observation_system_messages
from omlab.engine.reference_relative_time import add_reference_relative_time

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)

CASES = [
    (
        "* 🔴 (10:00) User started the job (meaning 2024-01-10)",
        "* 🔴 (10:00) User started the job (meaning 2024-01-10)",
    ),
    (
        "* 🔴 (10:00) User studied there (estimated approx. 2021–2026)",
        "* 🔴 (10:00) User studied there (estimated approx. 2021–2026)",
    ),
    ("* 🔴 (10:00) User adopted a cat (estimated Apr 2020)", "* 🔴 (10:00) User adopted a cat (estimated Apr 2020)"),
    (
        "* 🔴 (10:00) User traveled (meaning Mar 1-15, 2025)",
        "* 🔴 (10:00) User traveled (meaning Mar 1-15, 2025 - 1 year ago)",
    ),
    ("* 🔴 (10:00) User traveled (meaning Mar 1–15, 2025)", "* 🔴 (10:00) User traveled (meaning Mar 1–15, 2025)"),
    (
        "* 🔴 (10:00) User will visit parents (meaning May 30, 2026)",
        "* 🔴 (10:00) User will visit parents (meaning May 30, 2026 - 2 days ago, likely already happened)",
    ),
    (
        "* 🔴 (10:00) User will visit parents (meaning June 1, 2026)",
        "* 🔴 (10:00) User will visit parents (meaning June 1, 2026 - today, likely already happened)",
    ),
    (
        "* 🔴 (10:00) User is scheduled to fly (meaning May 3, 2026)",
        "* 🔴 (10:00) User is scheduled to fly (meaning May 3, 2026 - 4 weeks ago)",
    ),
    (
        "* 🔴 (10:00) User plans to move (estimated late April 2026)",
        "* 🔴 (10:00) User plans to move (estimated late April 2026 - 1 month ago, likely already happened)",
    ),
    (
        "* 🔴 (10:00) User studied (estimated April to May 2023)",
        "* 🔴 (10:00) User studied (estimated April to May 2023 - 3 years ago)",
    ),
    ("* 🔴 (10:00) Event (meaning Feb 30, 2026)", "* 🔴 (10:00) Event (meaning Feb 30, 2026 - 3 months ago)"),
    ("* 🔴 (10:00) Trip (meaning Jun 20, 2026)", "* 🔴 (10:00) Trip (meaning Jun 20, 2026 - in 2 weeks)"),
    ("* 🔴 (10:00) Trip (meaning Jun 5, 2027)", "* 🔴 (10:00) Trip (meaning Jun 5, 2027 - in 1 year)"),
    (
        "Date: May 15, 2026\n* 🔴 (10:00) a\n\nDate: May 30, 2026\n* 🟡 (11:00) b (meaning May 28, 2026)\n\nDate: Jun 1, 2026\n* c",
        "Date: May 15, 2026 (2 weeks ago)\n* 🔴 (10:00) a\n\n\n[2 weeks later]\n\nDate: May 30, 2026 (2 days ago)\n* 🟡 (11:00) b (meaning May 28, 2026 - 4 days ago)\n\n\n[2 days later]\n\nDate: Jun 1, 2026 (today)\n* c",
    ),
    (
        "Date: Jan 2, 2025\n* a\nDate: Mar 9, 2025\n* b\nDate: Aug 13–27, 2025\n* c",
        "Date: Jan 2, 2025 (1 year ago)\n* a\n\n[2 months later]\n\nDate: Mar 9, 2025 (1 year ago)\n* b\nDate: Aug 13–27, 2025\n* c",
    ),
    ("* 🔴 (10:00) User flew on Aug 13, 2024", "* 🔴 (10:00) User flew on Aug 13, 2024"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_the_reference_annotator_matches_1_31_0(text, expected):
    assert add_reference_relative_time(text, NOW) == expected


def test_the_actor_context_uses_the_reference_annotator_in_reference_mode():
    log = "* 🔴 (10:00) User traveled (meaning Mar 1–15, 2025)"

    def rendered(reference):
        messages = observation_system_messages(log, current_date=NOW, reference=reference)
        return "\n".join(m["content"] for m in messages)

    assert "(meaning Mar 1–15, 2025)" in rendered(True)  # 1.31.0 reads a hyphen only
    assert "(meaning Mar 1–15, 2025 - 1 year ago)" in rendered(False)
