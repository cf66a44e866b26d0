"""The lecture figure with the model half only: timings of a GPU without Nsight Compute's
counters beside the closed-form traffic (what docs/notebooks/ladder.ipynb draws on a GPU).
The left panel shows the model's bars and a legend of the model alone, no empty levels.
CPU only: the timings are the FABRICATED sample set of tests/support/data/sample_results."""
from __future__ import annotations

from bench import model_table, registry, results
from bench.families.matmul import plots
from tests.support import DATA

SAMPLE = DATA / "sample_results"


def test_model_half_without_counters(tmp_path):
    shape = "1024x1024x1024"
    ladder = [k for k in registry.select("@ladder") if k.backend == "cuda"]
    model_half = [dict(r, model_global_load_bytes=r["global_load_bytes"])
                  for r in model_table.rows(ladder, shape)]
    png, svg = plots.lecture(results.read(SAMPLE, "time"), {"rows": model_half}, tmp_path,
                             shape=shape)
    text = svg.read_text()
    assert png.stat().st_size > 20_000
    assert "no counters" in text                      # the left panel says what it shows
    for level in ("issued", "L1", "L2", "DRAM"):      # no legend entry without a bar
        assert f">{level}<" not in text, level


def test_a_set_without_timings_or_counters_gets_every_model_figure(tmp_path):
    """What a laptop's `bench report` draws: the traffic per rung and the lecture figure's
    model half, alone (no timings to put beside it), through the families."""
    from bench import plots

    results.write(tmp_path, "model", model_table.rows(registry.select("*")))
    made = plots.all_figures(tmp_path, tmp_path / "figures")
    assert list(made) == ["lecture_model", "model_traffic"]
    png, svg = made["lecture_model"]
    text = svg.read_text()
    assert png.stat().st_size > 20_000
    assert "no counters" in text and "4096x4096x4096" in text
    assert "TFLOP/s" not in text                      # no throughput panel without timings
    assert plots.caption("lecture_model")
