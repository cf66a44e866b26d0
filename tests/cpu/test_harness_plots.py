"""Figures and report.md from the small stored result set in tests/support/data/sample_results
(FABRICATED numbers, see tests/support/data/make_sample.py). CPU only."""
from __future__ import annotations

import shutil

import pytest

from bench.families.matmul import plots as matmul_plots
from bench import plots, report, results
from tests.support import DATA

SAMPLE = DATA / "sample_results"


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    out = tmp_path_factory.mktemp("figs")
    return out, plots.all_figures(SAMPLE, out)


def test_sample_is_marked_as_test_data():
    for kind, payload in results.load_set(SAMPLE).items():
        assert "fabricated" in payload["meta"]["note"], kind


@pytest.mark.parametrize("name", ["throughput", "traffic", "roofline", "lecture", "model_traffic"])
def test_every_figure_is_drawn(figures, name):
    _out, made = figures
    assert name in made
    png, svg = made[name]
    assert png.suffix == ".png" and png.stat().st_size > 20_000
    assert svg.suffix == ".svg" and svg.read_text().lstrip().startswith("<?xml")


def test_twins_share_a_colour():
    rows = results.read(SAMPLE, "time")["rows"]
    order, version_of, colours = matmul_plots.ladder(rows)
    assert version_of["triton_v3_smem_tiling"] == version_of["cuda_v3_smem_tiling"] == "v3"
    assert order[:2] == ["v1", "v1c"]
    assert len(set(colours.values())) == len(order)


def test_figures_skip_missing_data(tmp_path):
    results.write(tmp_path, "model", [])
    assert plots.all_figures(tmp_path, tmp_path / "f") == {}


def test_report_markdown_from_sample(tmp_path):
    for f in SAMPLE.iterdir():
        shutil.copy(f, tmp_path)
    figs = plots.all_figures(tmp_path, tmp_path / "figures")
    text = report.write_markdown(tmp_path, figs).read_text()
    for heading in ("## Environment", "## Ceilings measured in this run", "## Correctness",
                    "## Throughput", "## Memory traffic: model versus Nsight Compute",
                    "## Traffic models (closed form)", "## Figures"):
        assert heading in text
    assert "| PASS |" in text
    assert "![lecture](figures/lecture.png)" in text
    assert "51.7 TFLOP/s" in text


def test_roofline_labels_of_equal_speed_are_spread():
    ys = [0.70, 0.70, 0.71, 1.5]
    dy = matmul_plots._spread_labels(ys, min_gap=0.07)
    moved = sorted(y + d for y, d in zip(ys, dy))
    assert all(b - a >= 0.07 - 1e-12 for a, b in zip(moved, moved[1:]))
    assert dy[3] == 0.0                      # a label far from the others stays put


def test_redrawing_gives_the_same_svg_bytes(figures, tmp_path):
    """A replot of unchanged results must not change the committed SVGs (no date, no
    random ids), so that a diff of a result set shows only what really changed."""
    _out, made = figures
    again = plots.all_figures(SAMPLE, tmp_path)
    for name, (_png, svg) in made.items():
        assert again[name][1].read_bytes() == svg.read_bytes(), name


def test_ladder_roofline_at_the_largest_profiled_size(tmp_path):
    """With the ladder profiled at a second, larger size, a second roofline shows only the
    lecture's versions and their twins, at that size."""
    for f in SAMPLE.iterdir():
        shutil.copy(f, tmp_path)
    prof = results.read(tmp_path, "profile")
    timing = results.read(tmp_path, "time")
    big = "2048x2048x2048"
    extra_p, extra_t = [], []
    for r in prof["rows"]:
        if r["shape"] == "1024x1024x1024" and r.get("op", "matmul") == "matmul":
            extra_p.append(dict(r, shape=big, size=2048.0,
                                dram_read_bytes=(r.get("dram_read_bytes") or 1e6) * 8))
    for r in timing["rows"]:
        if r["shape"] == "1024x1024x1024" and r.get("op", "matmul") == "matmul":
            extra_t.append(dict(r, shape=big, size=2048.0))
    assert extra_p and extra_t
    results.write(tmp_path, "profile", prof["rows"] + extra_p, env=prof.get("env"),
                  meta=prof.get("meta"))
    results.write(tmp_path, "time", timing["rows"] + extra_t, env=timing.get("env"),
                  meta=timing.get("meta"))
    made = plots.all_figures(tmp_path, tmp_path / "figures")
    assert "roofline_ladder" in made and "roofline" in made
    svg = made["roofline_ladder"][1].read_text()
    assert big in svg and "lecture" in svg
    assert "cublas" not in svg and "triton_autotuned" not in svg


def _alternating_row(kernel, backend, precision, pct, rounds):
    return {"kernel": kernel, "backend": backend, "version": kernel.split("_")[1],
            "shape": "4096x4096x4096", "size": 4096, "precision": precision, "status": "ok",
            "tflops": 700 * pct / 100, "alternating_pct_reference": pct,
            "alternating_rounds_ms": rounds}


def test_rounds_figure_draws_each_round_against_cublas(tmp_path):
    """The alternating rounds' figure: a bar per kernel and precision, whiskers over the
    rounds (kernel ms / cuBLAS ms in each); a set without rounds draws nothing."""
    rows = [_alternating_row("cuda_t2_wgmma_tma", "cuda", p, 90.0,
                             "0.2400/0.2160 0.2410/0.2170 0.2420/0.2180") for p in ("bf16", "fp16")]
    rows += [_alternating_row("cuda_t3_warp_specialized", "cuda", "bf16", 98.0,
                              "0.2200/0.2156 0.2210/0.2160 0.2190/0.2150"),
             _alternating_row("triton_persistent", "triton", "bf16", 97.7, "")]
    payload = {"rows": rows, "meta": {}}
    png, svg = matmul_plots.rounds(payload, tmp_path)
    assert png.stat().st_size > 10_000 and svg.read_text().lstrip().startswith("<?xml")
    assert matmul_plots._round_ratios(rows[0]) == pytest.approx([0.9, 0.2170 / 0.2410,
                                                                 0.2180 / 0.2420])
    assert matmul_plots.rounds({"rows": [dict(rows[0], alternating_pct_reference="")],
                                "meta": {}}, tmp_path / "none") == []


def test_rounds_figure_holds_every_bar_and_draws_no_empty_panel(tmp_path):
    """A kernel at 1.38x cuBLAS keeps its bar and its label (the range stopped at 1.12x,
    past which the label was not drawn), and a shape timed in rounds at one precision only
    gets no empty panel at the other."""
    fast = dict(_alternating_row("cuda_auto", "cuda", "fp32", 138.0,
                                 "0.1000/0.1380 0.1010/0.1380"), shape="8192x8x8192")
    slow = _alternating_row("triton_auto", "triton", "fp32", 84.2, "0.1000/0.0842")
    other = _alternating_row("triton_auto", "triton", "bf16", 97.0, "0.1000/0.0970")
    lone = dict(_alternating_row("cuda_t5_stream_k", "cuda", "bf16", 101.0, "0.1000/0.1010"),
                shape="2048x2048x2048")
    png, svg = matmul_plots.rounds({"rows": [fast, slow, other, lone], "meta": {}}, tmp_path)
    text = svg.read_text()
    assert "1.380" in text and "0.842" in text and "0.970" in text
    assert "fp32 4096" in text and "bf16 4096" in text     # the titles of the two panels
    assert "bf16 8192" not in text and "fp32 2048" not in text    # nothing timed there
    # a row whose first panel is not drawn names its kernels beside the first one that is
    assert "cuda_t5_stream_k" in text


def test_sixteen_bit_set_at_one_size_has_no_fp32_panel_and_labelled_y(tmp_path):
    """A set timed at one size in bf16 and fp16 only (an alternating-rounds sweep): no fp32
    panel (an empty axis with only the ceilings was drawn), no empty roofline panel, and y
    tick labels on the tensor-core panels although their points span less than a factor of
    two (no 1-2-5 tick fell inside)."""
    timing = results.read(SAMPLE, "time")      # its env and ceilings (fp32 among them)
    n, flops = 4096, 2 * 4096 ** 3
    kernels = [("cuda_t2_wgmma_tma", "cuda", "t2"), ("cuda_t3_warp_specialized", "cuda", "t3"),
               ("triton_persistent", "triton", "persistent"), ("cublas", "cublas", "ref")]
    rows = []
    for p, base in (("bf16", 640.0), ("fp16", 610.0)):   # within 610-700 TFLOP/s
        for i, (k, b, v) in enumerate(kernels):
            t = base + 17.0 * i
            rows.append(dict(kernel=k, backend=b, version=v, op="matmul", twin="",
                             shape=f"{n}x{n}x{n}", size=float(n), precision=p, flops=flops,
                             compulsory_bytes=3 * n * n * 2, median_ms=flops / (t * 1e9),
                             tflops=t, status="ok", note=""))
    payload = dict(timing, rows=rows)
    fig = matmul_plots.throughput_figure(payload)
    try:
        fig.canvas.draw()
        titles = [ax.get_title() for ax in fig.axes]
        assert not any("fp32" in t for t in titles), titles
        panels = [ax for ax in fig.axes if ax.axison]
        assert sorted(ax.get_title() for ax in panels) == ["bf16 (tensor cores)",
                                                           "fp16 (tensor cores)"]
        for ax in panels:
            lo, hi = ax.get_ylim()
            assert hi / lo < 2                    # the case: no 1, 2, 5 x 10^k inside
            shown = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
            assert len(shown) >= 2, (ax.get_title(), shown)
            assert all(lo <= float(s) <= hi for s in shown), (lo, hi, shown)
    finally:
        matmul_plots.pyplot().close(fig)
    # the saved figures: the same, and the roofline without an fp32 panel either
    results.write(tmp_path, "time", rows, env=timing.get("env"), meta=timing.get("meta"))
    made = plots.all_figures(tmp_path, tmp_path / "figures")
    assert "throughput" in made and "roofline" in made
    for name in ("throughput", "roofline"):
        svg = made[name][1].read_text()
        assert "fp32:" not in svg and "bf16" in svg and "fp16" in svg, name
