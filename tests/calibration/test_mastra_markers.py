"""Calibration from a Mastra database's OM markers (the recorder's sample database)."""

from __future__ import annotations

from pathlib import Path

import pytest

from omlab.bench.calibration import CalibrationError
from omlab.bench.calibration.mastra import calibrate_mastra
from omlab.bench.datasets.mastra import production_frames
from omlab.tokens.tokenx import estimate_token_count

DB = Path(__file__).resolve().parents[2] / "datasets" / "samples" / "mastra_recorded.db"


def test_markers_give_the_observer_curve():
    _, markers = production_frames(DB)
    observed = markers[(markers["operation_type"] == "observation") & (markers["type"] == "data-om-buffering-end")]
    content = observed["tokens_in"].sum()
    produced = sum(estimate_token_count(p["observations"]) for p in observed["payload"])
    fit = calibrate_mastra(DB, roles=("observer",)).fit_for("observer")
    assert fit.model == "mastra:mastra_recorded.db" and fit.calls == len(observed)
    assert fit.failure_rate == 0.0 and fit.compression is not None
    assert fit.compression.overhead_tokens is None  # markers hold no reply usage
    predicted = sum(fit.compression.output_tokens(x) for x in observed["tokens_in"])
    assert predicted == pytest.approx(produced, rel=0.1)
    assert content / produced == pytest.approx(content / predicted, rel=0.1)
    assert fit.latency is None  # the recorder's mock model took 0 ms


def test_a_role_without_markers_is_named(tmp_path):
    _, markers = production_frames(DB)
    reflected = set(markers.loc[markers["operation_type"] == "reflection", "conversation_id"])
    quiet = sorted(set(markers["conversation_id"]) - reflected)
    assert quiet, "the sample database should have a thread without reflection"
    with pytest.raises(CalibrationError, match=r"no reflection markers .* role 'reflector'"):
        calibrate_mastra(DB, threads=quiet[:1])
