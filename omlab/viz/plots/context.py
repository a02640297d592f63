"""The sawtooth: a conversation's raw-message and observation tokens over time, with thresholds and events.

Raw (not yet observed) message tokens climb with every message and drop when the observer turns
them into observations (synchronously, or by activating buffered chunks); the observation log
climbs with every cycle and drops when the reflector condenses it. Dashed lines show the
thresholds that trigger those drops, and a band along the top marks each engine event.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.patches import Rectangle
from matplotlib.transforms import blended_transform_factory

from omlab.viz.plots import _format as fmt
from omlab.viz.plots._canvas import axes_or_new, draw_no_data, legend_below
from omlab.viz.plots._frames import (
    flag,
    has_rows,
    numeric,
    require_columns,
    select_value,
    single_value,
    utc_times,
)
from omlab.viz.style import (
    EVENT_COLORS,
    EVENT_KINDS,
    EVENT_LABELS,
    EVENT_MARKERS,
    FIGSIZE_WIDE,
    SERIES_COLORS,
    plain_text_plot,
    style_axes,
)

PLOT = "plot_context_timeline"
STEP_COLUMNS: tuple[str, ...] = (
    "conversation_id",
    "step",
    "ts",
    "pending_tokens",
    "threshold",
    "observation_tokens",
    "reflect_threshold",
    "block_after",
)
"""``steps_df`` columns the timeline needs (``buffered_message_tokens``, ``observed``,
``activated``, ``reflected``, ``blocked_s``, ``buffered_chunks``, ``thread_id`` and
``context_tokens`` are used when present)."""
EVENT_COLUMNS: tuple[str, ...] = ("conversation_id", "ts", "type", "operation_type")
"""``events_df`` columns the timeline needs when events are given."""

TimeAxis = Literal["time", "step"]

_LANE_HEIGHT = 0.06  # axes fraction per event lane
_LANE_MARGIN = 0.04


def select_conversation(
    steps: pd.DataFrame, *, conversation_id: object = None, thread_id: object = None
) -> pd.DataFrame:
    """One conversation's steps (optionally one thread's), in step order, ``ts`` as UTC datetimes.

    Raises:
        ValueError: Missing columns, an id that is not in the frame, or several conversations
            (or runs) with no ``conversation_id`` to choose one.
    """
    require_columns(steps, STEP_COLUMNS, frame_name="steps", plot=PLOT)
    if "run_id" in steps.columns:
        single_value(steps, "run_id", plot=PLOT, option="a steps frame filtered to one run_id")
    if conversation_id is None:
        conversation_id = single_value(steps, "conversation_id", plot=PLOT, option="conversation_id")
    frame = select_value(steps, "conversation_id", conversation_id, plot=PLOT, option="conversation_id")
    if thread_id is not None:
        if "thread_id" not in frame.columns:
            raise ValueError(f"{PLOT}: thread_id={thread_id!r} given but steps have no thread_id column")
        frame = select_value(frame, "thread_id", thread_id, plot=PLOT, option="thread_id")
    frame = frame.assign(ts=utc_times(frame["ts"]))
    return frame.sort_values("step", kind="stable").reset_index(drop=True)


def timeline_markers(steps: pd.DataFrame, events: pd.DataFrame | None = None) -> pd.DataFrame:
    """The events to mark on one conversation's timeline, one row per marker.

    With ``events`` (``events_df`` rows of the same conversation), markers come from the data
    parts: ``data-om-observation-end`` gives ``observation`` or ``reflection`` by its
    ``operation_type``, ``data-om-activation`` gives ``activation`` (``reflection`` for an
    activated buffered reflection), ``data-om-buffering-end`` gives ``buffering``. Without
    events (or when some step has no ``ts`` to place events by) they come from the step flags ``observed`` / ``activated`` / ``reflected`` and from
    increases of ``buffered_chunks``. ``blocking`` always comes from steps with ``blocked_s > 0``.

    Args:
        steps: Steps of one conversation (see :func:`select_conversation`).
        events: Events of the same conversation, or None.

    Returns:
        Columns ``kind`` (one of :data:`omlab.viz.style.EVENT_KINDS`), ``ts``, ``step`` (the last
        step at or before the event) and ``blocked_s`` (blocking rows only, else NaN).
    """
    parts: list[pd.DataFrame] = []
    # Events are placed on steps by time, so they need every step's timestamp.
    if has_rows(events) and steps["ts"].notna().all():
        parts.append(_markers_from_events(steps, events))
    else:
        parts.append(_markers_from_step_flags(steps))
    if "blocked_s" in steps.columns:
        blocked = numeric(steps["blocked_s"])
        rows = steps[blocked > 0]
        parts.append(
            pd.DataFrame(
                {
                    "kind": "blocking",
                    "ts": rows["ts"],
                    "step": rows["step"],
                    "blocked_s": blocked[blocked > 0],
                }
            )
        )
    markers = (
        pd.concat([p for p in parts if len(p)], ignore_index=True)
        if any(len(p) for p in parts)
        else pd.DataFrame(
            {
                "kind": pd.Series(dtype=str),
                "ts": pd.Series(dtype="datetime64[ns, UTC]"),
                "step": pd.Series(dtype="int64"),
                "blocked_s": pd.Series(dtype=float),
            }
        )
    )
    return markers.reset_index(drop=True)


def _markers_from_events(steps: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    require_columns(events, EVENT_COLUMNS, frame_name="events", plot=PLOT)
    kind = pd.Series(None, index=events.index, dtype=object)
    event_type = events["type"].astype(str)
    operation = events["operation_type"].astype(str)
    end = event_type == "data-om-observation-end"
    activation = event_type == "data-om-activation"
    kind[end & (operation == "observation")] = "observation"
    kind[end & (operation == "reflection")] = "reflection"
    kind[activation & (operation != "reflection")] = "activation"
    kind[activation & (operation == "reflection")] = "reflection"
    kind[event_type == "data-om-buffering-end"] = "buffering"
    chosen = events[kind.notna()]
    ts = utc_times(chosen["ts"])
    return pd.DataFrame(
        {
            "kind": kind[kind.notna()].to_numpy(),
            "ts": ts.to_numpy(),
            "step": _step_at(steps, ts),
            "blocked_s": np.nan,
        }
    )


def _markers_from_step_flags(steps: pd.DataFrame) -> pd.DataFrame:
    picks: list[tuple[str, pd.Series]] = []
    for kind, column in (
        ("observation", "observed"),
        ("activation", "activated"),
        ("reflection", "reflected"),
    ):
        if column in steps.columns:
            picks.append((kind, flag(steps[column])))
    if "buffered_chunks" in steps.columns:
        chunks = numeric(steps["buffered_chunks"]).fillna(0)
        picks.append(("buffering", chunks.diff().fillna(chunks) > 0))
    frames = [
        pd.DataFrame({"kind": kind, "ts": steps.loc[mask, "ts"], "step": steps.loc[mask, "step"], "blocked_s": np.nan})
        for kind, mask in picks
        if mask.any()
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _step_at(steps: pd.DataFrame, times: pd.Series) -> np.ndarray:
    """The step number of the last step at or before each time (the first step for earlier times)."""
    order = np.argsort(_naive_utc(steps["ts"]), kind="stable")
    step_times = _naive_utc(steps["ts"])[order]
    index = np.clip(np.searchsorted(step_times, _naive_utc(times), side="right") - 1, 0, len(steps) - 1)
    return steps["step"].to_numpy()[order][index]


@plain_text_plot
def plot_context_timeline(
    steps: pd.DataFrame,
    events: pd.DataFrame | None = None,
    *,
    conversation_id: object = None,
    thread_id: object = None,
    x: TimeAxis = "step",
    show_buffered: bool = True,
    show_context: bool = False,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Plot the sawtooth of one conversation: message and observation tokens, thresholds, events.

    Args:
        steps: ``steps_df`` rows (see :data:`STEP_COLUMNS`).
        events: ``events_df`` rows, or None to take the markers from the step flags.
        conversation_id: The conversation to draw; required when ``steps`` holds several.
        thread_id: Draw only this thread's steps (resource-scoped runs).
        x: ``"step"`` (step number, the default: multi-session datasets leave days between
            sessions, which squeezes every cycle into a thin spike on a time axis) or ``"time"``
            (virtual time of each step).
        show_buffered: Also draw message tokens already sealed into buffered chunks.
        show_context: Also draw the actor's whole context size (``context_tokens``).
        title: Replaces the default title.
        ax: Draw here; a new figure is made when None.

    Returns:
        The Axes. With no steps it carries a "no data" note instead of lines.

    Raises:
        ValueError: Missing columns, an unknown ``x``, or an ambiguous/unknown conversation.
    """
    ax = axes_or_new(ax, FIGSIZE_WIDE)
    if x not in ("time", "step"):
        raise ValueError(f"{PLOT}: x must be 'time' or 'step', got {x!r}")
    if not has_rows(steps):
        return draw_no_data(ax, title=title or "Context over time", reason="no engine steps")
    frame = select_conversation(steps, conversation_id=conversation_id, thread_id=thread_id)
    conversation = frame["conversation_id"].iloc[0]
    if has_rows(events):
        require_columns(events, EVENT_COLUMNS, frame_name="events", plot=PLOT)
        events = events[events["conversation_id"].astype(str) == str(conversation)]
        if thread_id is not None and "thread_id" in events.columns:
            events = events[events["thread_id"].astype(str) == str(thread_id)]
    markers = timeline_markers(frame, events)

    if x == "time":
        if frame["ts"].isna().any():
            raise ValueError(f"{PLOT}: some steps have no ts; use x='step'")
        xs = _naive_utc(frame["ts"])
        marker_xs = _naive_utc(markers["ts"]) if len(markers) else np.array([], dtype="datetime64[ns]")
    else:
        xs = frame["step"].to_numpy()
        marker_xs = markers["step"].to_numpy()

    tops = [_draw_series(ax, xs, frame, show_buffered=show_buffered, show_context=show_context)]
    tops.append(
        _draw_limit(
            ax,
            xs,
            frame["threshold"],
            color=SERIES_COLORS["pending"],
            linestyle="--",
            label="observation threshold (messageTokens)",
        )
    )
    tops.append(
        _draw_limit(
            ax,
            xs,
            frame["block_after"],
            color=SERIES_COLORS["pending"],
            linestyle=":",
            label="blockAfter (forced synchronous observation)",
        )
    )
    tops.append(
        _draw_limit(
            ax,
            xs,
            frame["reflect_threshold"],
            color=SERIES_COLORS["observations"],
            linestyle="--",
            label="reflection threshold (observationTokens)",
        )
    )
    data_top = max(t for t in tops if np.isfinite(t)) if any(np.isfinite(t) for t in tops) else 1.0
    lanes = _draw_event_lanes(ax, markers, marker_xs)
    data_fraction = 1.0 - (lanes * _LANE_HEIGHT + _LANE_MARGIN if lanes else _LANE_MARGIN)
    ax.set_ylim(0, max(data_top, 1.0) / data_fraction)
    # Token ticks stop below the event band: the band's height has no token meaning.
    ax.set_yticks([t for t in ax.get_yticks() if 0 <= t <= max(data_top, 1.0) * 1.02])

    ax.yaxis.set_major_formatter(fmt.TOKENS_AXIS)
    if x == "time":
        locator = AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    suffix = f", thread {thread_id}" if thread_id is not None else ""
    style_axes(
        ax,
        title=title or f"Context over time: conversation {conversation}{suffix}",
        xlabel="virtual time (UTC)" if x == "time" else "engine step (one per ingested message)",
        ylabel="tokens",
    )
    legend_below(ax, ncol=3)
    return ax


def _naive_utc(times: pd.Series) -> np.ndarray:
    return utc_times(times).dt.tz_localize(None).to_numpy(dtype="datetime64[ns]")


def _draw_series(ax: Axes, xs: np.ndarray, frame: pd.DataFrame, *, show_buffered: bool, show_context: bool) -> float:
    """Draw the token lines; return the highest value drawn."""
    pending = numeric(frame["pending_tokens"])
    observations = numeric(frame["observation_tokens"])
    ax.plot(xs, pending, color=SERIES_COLORS["pending"], linewidth=1.6, label="raw messages not yet observed")
    ax.plot(xs, observations, color=SERIES_COLORS["observations"], linewidth=1.6, label="observation log")
    top = _finite_max(pending.max(), observations.max())
    if show_buffered and "buffered_message_tokens" in frame.columns:
        buffered = numeric(frame["buffered_message_tokens"])
        if (buffered.fillna(0) > 0).any():
            ax.fill_between(
                xs,
                0,
                buffered.fillna(0),
                color=SERIES_COLORS["buffered"],
                alpha=0.25,
                linewidth=0,
                label="messages already in buffered chunks",
            )
            top = _finite_max(top, buffered.max())
    if show_context:
        if "context_tokens" not in frame.columns:
            raise ValueError(f"{PLOT}: show_context=True needs a context_tokens column")
        context = numeric(frame["context_tokens"])
        ax.plot(xs, context, color=SERIES_COLORS["context"], linewidth=1.0, label="actor's whole context")
        top = _finite_max(top, context.max())
    return float(top) if np.isfinite(top) else 0.0


def _finite_max(*values: float) -> float:
    """The largest finite value, NaN when there is none (a run whose steps carry no numbers)."""
    finite = [float(v) for v in values if v is not None and np.isfinite(v)]
    return max(finite) if finite else float("nan")


def _draw_limit(ax: Axes, xs: np.ndarray, values: pd.Series, *, color: str, linestyle: str, label: str) -> float:
    """A threshold: a horizontal line when constant, a step line when it moves; NaN when absent."""
    limits = numeric(values)
    distinct = limits.dropna().unique()
    if len(distinct) == 0:
        return float("nan")
    if len(distinct) == 1:
        ax.axhline(
            distinct[0],
            color=color,
            linestyle=linestyle,
            linewidth=1.2,
            label=f"{label} = {fmt.tokens(distinct[0])}",
        )
    else:
        ax.plot(
            xs,
            limits,
            drawstyle="steps-post",
            color=color,
            linestyle=linestyle,
            linewidth=1.2,
            label=f"{label} (varies)",
        )
    return float(limits.max())


def _draw_event_lanes(ax: Axes, markers: pd.DataFrame, marker_xs: np.ndarray) -> int:
    """One row of markers per event kind along the top of the axes; return the number of rows."""
    kinds = [k for k in EVENT_KINDS if len(markers) and (markers["kind"] == k).any()]
    to_lane = blended_transform_factory(ax.transData, ax.transAxes)
    for lane, kind in enumerate(kinds):
        chosen = (markers["kind"] == kind).to_numpy()
        y = 1.0 - _LANE_MARGIN / 2 - (lane + 0.5) * _LANE_HEIGHT
        count = int(chosen.sum())
        # One activation step can activate several chunks: say so rather than hide stacked markers.
        at_steps = markers.loc[chosen, "step"].nunique()
        label = f"{EVENT_LABELS[kind]} ({count}" + (f" at {at_steps} steps)" if at_steps < count else ")")
        if kind == "blocking":
            label = (
                f"{EVENT_LABELS[kind]} ({count} step{'s' if count != 1 else ''}, "
                f"{markers.loc[chosen, 'blocked_s'].sum():.1f} virtual s)"
            )
        ax.plot(
            marker_xs[chosen],
            np.full(count, y),
            transform=to_lane,
            linestyle="none",
            marker=EVENT_MARKERS[kind],
            color=EVENT_COLORS[kind],
            markersize=7 if kind != "buffering" else 10,
            markeredgewidth=1.5 if kind == "buffering" else 0.8,
            alpha=0.85,
            label=label,
            clip_on=False,
        )
    if kinds:
        band_bottom = 1.0 - _LANE_MARGIN / 2 - len(kinds) * _LANE_HEIGHT
        ax.add_patch(
            Rectangle(
                (0.0, band_bottom),
                1.0,
                1.0 - band_bottom,
                transform=ax.transAxes,
                facecolor="#F4F4F4",
                edgecolor="none",
                zorder=0,
            )
        )
    return len(kinds)
