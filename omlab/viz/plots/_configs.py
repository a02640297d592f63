"""One frame out of several runs' frames, each row labelled with the config it came from."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from omlab.viz.plots._frames import has_rows

CONFIG = "config"
"""The label column the run-level plots add (``by`` values or the mapping's keys)."""
ALL_RUNS = "all runs"


def labelled_by_config(
    frames: pd.DataFrame | Mapping[str, pd.DataFrame], *, by: str | None, frame_name: str, plot: str
) -> pd.DataFrame:
    """The rows of ``frames`` with a ``config`` column.

    ``frames`` is one frame, whose ``by`` column names the config of each row (``config_name``
    after a merge with ``runs_df``, say); without ``by`` every row is one config, named after its
    run when the frame holds a single ``run_id``. Or a mapping ``{config label: frame}`` (the
    cells of a sweep); ``by`` must then be None.

    Raises:
        ValueError: ``by`` is not a column, or given with a mapping.
    """
    if isinstance(frames, Mapping):
        if by is not None:
            raise ValueError(f"{plot}: by={by!r} applies to one {frame_name} frame, not to a mapping of them")
        parts = [frame.assign(**{CONFIG: str(label)}) for label, frame in frames.items() if has_rows(frame)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if not has_rows(frames):
        return pd.DataFrame()
    if by is not None:
        if by not in frames.columns:
            raise ValueError(
                f"{plot}: by={by!r} is not a column of the {frame_name} frame; it has {list(frames.columns)}"
            )
        return frames.assign(**{CONFIG: frames[by].astype(str).to_numpy()})
    runs = frames["run_id"].dropna().astype(str).unique() if "run_id" in frames.columns else []
    return frames.assign(**{CONFIG: runs[0] if len(runs) == 1 else ALL_RUNS})
