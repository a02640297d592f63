"""Evidence lineage: where each evidence turn of a question went in a run's memory.

For every question that cites evidence turns, the run's events say which observation cycle
covered each turn, which observation lines it became, which reflection generation kept, rewrote
or dropped those lines, and whether they were in the actor's context when the question was asked
(:mod:`~omlab.bench.lineage.trace`). :mod:`~omlab.bench.lineage.tables` turns that into the
``lineage`` and ``lineage_questions`` tables (``docs/results-schema.md``), with a loss cause per
question; :mod:`~omlab.bench.lineage.drops` reads back, for evidence a reflection dropped, the
dropped lines and what the Reflector wrote instead.
"""

from omlab.bench.lineage.drops import reflection_drops
from omlab.bench.lineage.run import LineageInputs, lineage_of, read_inputs, records, run_lineage
from omlab.bench.lineage.tables import LOSS_CAUSES, lineage_frames
from omlab.bench.lineage.trace import LINEAGE_EVENT_TYPES, final_log, trace_conversation

__all__ = [
    "LINEAGE_EVENT_TYPES",
    "LOSS_CAUSES",
    "LineageInputs",
    "final_log",
    "lineage_frames",
    "lineage_of",
    "read_inputs",
    "records",
    "reflection_drops",
    "run_lineage",
    "trace_conversation",
]
