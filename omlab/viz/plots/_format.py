"""How numbers read on plots: token counts, dollars, percentages and ratios."""

from __future__ import annotations

import math

from matplotlib.ticker import FuncFormatter


def tokens(value: float) -> str:
    """``950``, ``12.3k``, ``1.25M``: a token count short enough for a tick or an annotation."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    size = abs(value)
    if size >= 1e6:
        return f"{value / 1e6:.3g}M"
    if size >= 1e3:
        return f"{value / 1e3:.3g}k"
    return f"{value:.0f}"


def usd(value: float) -> str:
    """Dollars with enough digits to tell small per-run costs apart (``$0.0042``, ``$12.30``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if value == 0:
        return "$0"
    if abs(value) >= 100:
        return f"${value:,.0f}"
    if abs(value) >= 1:
        return f"${value:.2f}"
    return f"${value:.2g}" if abs(value) < 0.01 else f"${value:.3f}"


def percent(value: float) -> str:
    """A 0-1 fraction as a percentage with one decimal (``0.625`` -> ``62.5%``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{100 * value:.1f}%"


def ratio(value: float) -> str:
    """A compression ratio (``6.2×``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.3g}×"


TOKENS_AXIS = FuncFormatter(lambda v, _pos: tokens(v))
USD_AXIS = FuncFormatter(lambda v, _pos: usd(v))
PERCENT_AXIS = FuncFormatter(lambda v, _pos: f"{100 * v:.0f}%")
