"""omlab's plots: pure functions from a results frame to a matplotlib ``Axes``.

Every ``plot_*`` takes a tidy frame (``steps_df``, ``events_df``, ``calls_df``, ``answers_df``,
``metrics_df`` or a sweep/points frame), an optional ``ax`` and keyword options, and returns
the ``Axes``. None opens a database or touches pyplot's global state: with no ``ax`` a new
``matplotlib.figure.Figure`` is made (reach it as ``ax.figure``).

Empty input is not an error: a frame with no rows gives an ``Axes`` carrying the title and a
"no data: <reason>" note, so a notebook or widget whose selection is empty still draws. Wrong
input is: missing columns, unknown option values or an ambiguous selection raise ``ValueError``
naming the plot, the frame and the problem.
"""

from omlab.viz.plots.accuracy import AccuracyTable, accuracy_table, plot_accuracy_by_type
from omlab.viz.plots.compression import compression_cycles, plot_compression
from omlab.viz.plots.context import plot_context_timeline, select_conversation, timeline_markers
from omlab.viz.plots.cost import cost_table, plot_cost_breakdown
from omlab.viz.plots.loss_causes import loss_cause_table, plot_loss_causes
from omlab.viz.plots.pareto import pareto_front, plot_cost_vs_accuracy
from omlab.viz.plots.survival import SurvivalTable, fact_survival, plot_fact_survival
from omlab.viz.plots.sweep import plot_sweep_heatmap, sweep_grid
from omlab.viz.plots.tiers import plot_tier_routing, tier_table

__all__ = [
    "AccuracyTable",
    "SurvivalTable",
    "accuracy_table",
    "compression_cycles",
    "cost_table",
    "fact_survival",
    "loss_cause_table",
    "pareto_front",
    "plot_accuracy_by_type",
    "plot_compression",
    "plot_context_timeline",
    "plot_cost_breakdown",
    "plot_cost_vs_accuracy",
    "plot_fact_survival",
    "plot_loss_causes",
    "plot_sweep_heatmap",
    "plot_tier_routing",
    "select_conversation",
    "sweep_grid",
    "tier_table",
    "timeline_markers",
]
