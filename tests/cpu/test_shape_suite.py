"""The matmul shape suite (bench/families/matmul/suite.py) and its report section and figure
(bench/families/matmul/suite_report.py), from fabricated timing rows. CPU only."""
from __future__ import annotations

import math

import pytest

from bench import cli, problems
from bench.families.matmul import suite, suite_report
from bench.families.matmul.models import MatmulShape

CEILINGS = {"copy_gbps": 3000.0, "cublas_tflops": {"fp16": 700.0, "fp32": 50.0}}


def test_the_suite_has_every_kind_of_shape():
    """At least 40 distinct shapes, each category present, the issue's named cases in it."""
    shapes = [s for _n, _c, s in suite.SUITE]
    assert len(shapes) == len(set(shapes)) >= 40
    assert {c for _n, c, _s in suite.SUITE} == set(suite.CATEGORIES)
    for must in ("8205x5921x2949", "4097x4097x4097", "4096x4100x4096", "3x8192x8192",
                 "8192x3x8192", "1000x1000x4099", "4097x128256x4096", "1x4096x4096"):
        assert must in shapes, must
    ks = {MatmulShape.parse(s).K % 8 for s in shapes} | {MatmulShape.parse(s).N % 8 for s in shapes}
    assert {1, 2, 4} <= ks                      # odd, 2 mod 4, 4 mod 8
    skinny = [s for s in map(MatmulShape.parse, shapes) if min(s.M, s.N) <= 16]
    assert len(skinny) >= 8
    assert problems.get("matmul").parse_shapes(suite.text())


def test_suite_flag_selects_the_suite_and_refuses_with_shapes(capsys):
    assert cli._suite_spec("shapes", [k for k in cli._select("cuda_v3*")]) == {
        "matmul": suite.text()}
    with pytest.raises(cli.UsageError, match="not both"):
        cli._shapes("64x64x64", cli._select("cuda_v3*"), "check_shapes", "shapes")
    with pytest.raises(cli.UsageError, match="there are: shapes"):
        cli._shapes(None, cli._select("cuda_v3*"), "check_shapes", "nope")
    # one category at a time (a run that fits a time limit, the next with --append); the
    # categories together are the suite
    few = cli._suite_spec("shapes:few-tiles", cli._select("cuda_v3*"))["matmul"].split(",")
    assert few and all(suite.by_shape()[s][1] == "few-tiles" for s in few)
    parts = [suite.text(c) for c in suite.CATEGORIES]
    assert sorted(",".join(parts).split(",")) == sorted(suite.text().split(","))


def _row(kernel, backend, shape, precision, tflops, reference=False):
    s = MatmulShape.parse(shape)
    flops = 2 * s.M * s.N * s.K
    nbytes = (s.M * s.K + s.K * s.N + s.M * s.N) * (4 if precision == "fp32" else 2)
    roof = min(CEILINGS["cublas_tflops"][precision], CEILINGS["copy_gbps"] * 1e9 * flops
               / nbytes / 1e12)
    return dict(kernel=kernel, backend=backend, op="matmul", shape=shape, precision=precision,
                status="ok", flops=flops, tflops=tflops, roof_tflops=roof,
                pct_roof=100 * tflops / roof, is_reference=reference)


def _payload():
    rows = []
    for _n, _c, shape in suite.SUITE[:suite_report.MIN_SHAPES]:
        for p in ("fp16",):
            roof = _row("x", "cuda", shape, p, 1.0)["roof_tflops"]
            rows += [_row("cublas", "cublas", shape, p, 0.8 * roof, reference=True),
                     _row("cuda_t5_stream_k", "cuda", shape, p, 0.9 * roof),
                     _row("cuda_t1_mma_sync", "cuda", shape, p, 0.5 * roof),
                     _row("triton_autotuned", "triton", shape, p, 0.6 * roof)]
    rows[-1]["tflops"] /= 4                        # Triton's worst shape: the last one
    rows[-1]["pct_roof"] /= 4
    return {"rows": rows, "meta": {"ceilings": CEILINGS}, "env": {}}


def test_lines_take_each_languages_best_per_shape():
    shapes, ls = suite_report.lines(_payload()["rows"], "fp16")
    assert len(shapes) == suite_report.MIN_SHAPES
    best = ls["best CUDA"]
    assert set(best.picked.values()) == {"cuda_t5_stream_k"}
    assert best.geomean_roof() == pytest.approx(90)
    assert best.geomean_cublas() == pytest.approx(0.9 / 0.8)
    tri = ls["best Triton"]
    assert tri.worst() == _payload()["rows"][-1]["shape"]
    vs = suite_report.against_the_field(ls, "best Triton", "cublas")
    assert min(vs.values()) == pytest.approx(0.15 / 0.9)
    intensity = [suite.intensity(MatmulShape.parse(s), 2) for s in shapes]
    assert intensity == sorted(intensity)


def test_section_summary_and_figure(tmp_path):
    payload = _payload()
    text = suite_report.section_suite(payload)
    assert text.startswith("## Shape suite") and "### fp16" in text
    assert "best CUDA" in text and "best Triton" in text and "cuda_t5_stream_k" in text
    lines = suite_report.summary_lines(payload)
    assert len(lines) == 1 and "best CUDA 1.12x cuBLAS" in lines[0]
    files = suite_report.figure(payload, tmp_path)
    assert [p.suffix for p in files] == [".png", ".svg"] and all(p.stat().st_size for p in files)
    assert suite_report.section_suite({"rows": [], "meta": {}}) == ""
    assert suite_report.figure({"rows": []}, tmp_path) == []


def test_a_sweep_of_squares_is_no_run_of_the_suite(tmp_path):
    """The default time shapes hold three suite shapes (1024^3, 2048^3, 4096^3): too few for
    a geometric mean over the suite, so no section, summary or figure is made of them."""
    rows = [r for r in _payload()["rows"]][:4 * (suite_report.MIN_SHAPES - 1)]
    payload = {"rows": rows, "meta": {"ceilings": CEILINGS}, "env": {}}
    assert suite_report.section_suite(payload) == ""
    assert suite_report.summary_lines(payload) == []
    assert suite_report.figure(payload, tmp_path) == []
    assert math.isnan(suite_report.Line("x").geomean_roof())


def test_a_part_of_the_suite_is_a_run_of_it(tmp_path):
    """Rows timed with --suite (a category, or a run cut by a time limit) make the section
    and the figure even when fewer than MIN_SHAPES shapes were timed: the table says how
    many."""
    rows = [dict(r, suite="shapes:skinny") for r in _payload()["rows"]][:4 * 3]
    payload = {"rows": rows, "meta": {"ceilings": CEILINGS}, "env": {}}
    assert suite_report.section_suite(payload).startswith("## Shape suite")
    assert suite_report.figure(payload, tmp_path)
