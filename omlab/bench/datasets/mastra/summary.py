"""The import summary: what was read, counted so it can be checked against the database."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from omlab.bench.datasets.mastra.imported import ImportedThread
from omlab.bench.datasets.mastra.parts import part_kind


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """Counts of one import.

    Attributes:
        location: The database read.
        dialect: ``sqlite`` or ``postgres``.
        threads: Threads imported (with at least one message).
        resources: Distinct resources of those threads.
        messages: Messages imported.
        messages_by_role: ``{role: count}``.
        parts_by_type: ``{part type: count}`` over every imported message, markers included:
            every part stored is here.
        unknown_part_types: Types kept as generic parts (no field mapping; see ``parts.py``).
        om_records: Observational-memory records (one per generation).
        generations: ``{thread or resource id: highest generationCount}``.
        reflections: Records a reflection created (``originType = "reflection"``).
        empty_threads: Selected threads skipped because they have no messages.
        resource_rows: Rows of the resources table (working memory), read but not replayed.
    """

    location: str
    dialect: str
    threads: int
    resources: int
    messages: int
    messages_by_role: dict[str, int]
    parts_by_type: dict[str, int]
    unknown_part_types: list[str]
    om_records: int
    generations: dict[str, int]
    reflections: int
    empty_threads: list[str] = field(default_factory=list)
    resource_rows: int = 0

    @property
    def parts(self) -> int:
        """Parts imported, all types."""
        return sum(self.parts_by_type.values())

    @property
    def om_markers(self) -> int:
        """``data-om-*`` parts (production's OM markers)."""
        return sum(n for t, n in self.parts_by_type.items() if part_kind(t) == "om-marker")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values."""
        return {
            "location": self.location,
            "dialect": self.dialect,
            "threads": self.threads,
            "resources": self.resources,
            "messages": self.messages,
            "messages_by_role": self.messages_by_role,
            "parts": self.parts,
            "parts_by_type": self.parts_by_type,
            "unknown_part_types": self.unknown_part_types,
            "om_records": self.om_records,
            "om_markers": self.om_markers,
            "generations": self.generations,
            "reflections": self.reflections,
            "empty_threads": self.empty_threads,
            "resource_rows": self.resource_rows,
        }

    def format(self) -> str:
        """The summary as the CLI prints it."""
        roles = ", ".join(f"{n} {r}" for r, n in sorted(self.messages_by_role.items()))
        lines = [
            f"imported {self.location} ({self.dialect})",
            f"  threads      {self.threads} in {self.resources} resource(s)"
            + (f"; skipped {len(self.empty_threads)} without messages" if self.empty_threads else ""),
            f"  messages     {self.messages} ({roles})",
            f"  parts        {self.parts}",
        ]
        for part_type, count in sorted(self.parts_by_type.items()):
            note = {"unknown": "  (kept as a generic part)", "om-marker": "  (production OM marker)"}.get(
                part_kind(part_type), ""
            )
            lines.append(f"    {part_type:<28}{count:>7}{note}")
        gens = ", ".join(f"{key}: {value}" for key, value in sorted(self.generations.items())) or "none"
        lines.append(f"  OM records   {self.om_records} ({self.reflections} from reflections; last generation {gens})")
        return "\n".join(lines)


def summarize(
    location: str,
    dialect: str,
    threads: Sequence[ImportedThread],
    records: Sequence[dict[str, Any]],
    empty_threads: Sequence[str],
    resource_rows: int,
) -> ImportSummary:
    """Count an import (see :class:`ImportSummary`)."""
    roles: Counter[str] = Counter()
    parts: Counter[str] = Counter()
    for thread in threads:
        for message in thread.messages:
            roles[message.role] += 1
            parts.update(part["type"] for part in message.parts)
    generations: dict[str, int] = {}
    for record in records:
        key = record.get("threadId") if record.get("scope") == "thread" else record.get("resourceId")
        generations[str(key)] = max(generations.get(str(key), 0), int(record.get("generationCount") or 0))
    return ImportSummary(
        location=location,
        dialect=dialect,
        threads=len(threads),
        resources=len({t.resource_id for t in threads}),
        messages=sum(roles.values()),
        messages_by_role=dict(sorted(roles.items())),
        parts_by_type=dict(sorted(parts.items())),
        unknown_part_types=sorted(t for t in parts if part_kind(t) == "unknown"),
        om_records=len(records),
        generations=generations,
        reflections=sum(1 for r in records if r.get("originType") == "reflection"),
        empty_threads=list(empty_threads),
        resource_rows=resource_rows,
    )
