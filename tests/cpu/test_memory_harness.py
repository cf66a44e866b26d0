"""CPU tier: the harness around the memory-bound ops, on FABRICATED timings: the sweep plan
(references, shapes per op), the derived bandwidth columns, the bandwidth figures and the
report's bandwidth, targets and counter sections. No kernel runs."""
from __future__ import annotations

import pytest

from bench import perf, plots, problems, registry, report, results
from bench.families.memory import report as report_memory
from bench.timing import Timing

COPY_GBPS = 3000.0


def fabricated_rows(patterns: str, shapes=None, speed: dict | None = None) -> list[dict]:
    """Rows as `bench time` writes them, with a made-up time: every kernel moves its
    compulsory bytes at speed[backend or version] x the copy bandwidth (small sizes slower)."""
    speed = speed or {"cuda": 0.93, "triton": 0.91, "eager": 0.85, "compile": 0.9}
    work, skipped = perf.plan(registry.select(patterns), shapes, None, registry.kernels())
    assert not skipped
    rows = []
    for problem, shape, k, p, is_ref in work:
        comp = problem.compulsory_bytes(shape, p)
        frac = speed.get(k.version, speed.get(k.backend, 0.5)) * min(1.0, comp / 64e6 + 0.05)
        ms = max(comp / (frac * COPY_GBPS * 1e9) * 1e3, 0.002)
        row = perf._row(k, problem, shape, p, Timing(ms, ms * 0.99, ms * 1.01, ms * 0.98, 100))
        row["is_reference"] = is_ref
        rows.append(row)
    return perf.derive(rows, {"copy_gbps": COPY_GBPS})


def payload(rows) -> dict:
    return {"schema": results.SCHEMA, "kind": "time", "rows": rows,
            "env": {"gpu": "fabricated", "device": "cuda"},
            "meta": {"note": "fabricated", "ceilings": {"copy_gbps": COPY_GBPS, "copy_bytes": 2**30}}}


def test_plan_adds_pytorch_eager_at_every_shape():
    work, skipped = perf.plan(registry.select("cuda_softmax*"), None, None, registry.kernels())
    shapes = problems.get("softmax").parse_shapes(problems.get("softmax").time_shapes["cuda"])
    refs = [(k.name, str(s)) for _p, s, k, _prec, ref in work if ref]
    assert refs == [("torch_softmax", str(s)) for s in shapes for _ in ("fp32", "fp16", "bf16")]
    assert not skipped and len(shapes) == 12


def test_a_shape_a_kernel_refuses_is_skipped_with_the_reason():
    """Kernel.refuses: row_sram takes no row over 32768, the split no column; check says so
    (and time, profile and the sanitizer skip the same shapes) where a call would raise."""
    from bench import check

    kernels = registry.select("cuda_softmax_row_sram,triton_softmax_split")
    work = check.plan(kernels, "3x40000,7x20:dim=0,5x300", ["fp32"], ("random",), "cuda")
    skipped = {(r.kernel, r.shape): r.note for r in work if isinstance(r, check.CheckResult)}
    runs = {(k.name, str(shape)) for k, _p, shape, _prec, _m in
            (w for w in work if isinstance(w, tuple))}
    assert set(skipped) == {("cuda_softmax_row_sram", "3x40000"),
                            ("triton_softmax_split", "7x20:dim=0")}
    assert "at most 32768" in skipped[("cuda_softmax_row_sram", "3x40000")]
    assert "the split takes rows" in skipped[("triton_softmax_split", "7x20:dim=0")]
    assert runs == {("cuda_softmax_row_sram", "7x20:dim=0"), ("cuda_softmax_row_sram", "5x300"),
                    ("triton_softmax_split", "3x40000"), ("triton_softmax_split", "5x300")}
    assert all(r.status == "skip" for r in work if isinstance(r, check.CheckResult))


def test_plan_skips_ops_whose_shapes_do_not_fit():
    work, skipped = perf.plan(registry.select("cuda_v3*,cuda_rgb*"), "256x256x256", None,
                              registry.kernels())
    assert {k.name for k in skipped} == {"cuda_rgb_to_grey", "torch_rgb_to_grey"}  # not an image
    assert {k.name for _p, _s, k, _pr, _r in work} == {"cuda_v3_smem_tiling", "cublas"}


def test_quick_shapes_are_per_op():
    q = perf.quick_shapes(registry.select("*"))
    assert q["matmul"] == "256x256x256,1024x1024x1024"
    assert "4096x32768" in q["softmax"] and "67108864" in q["copy"]
    work, _ = perf.plan(registry.select("cuda_copy"), q, None, registry.kernels())
    assert {str(s) for _p, s, *_ in work} == {"6", "67108864"}


def test_derived_columns_are_bandwidth_against_copy():
    rows = fabricated_rows("cuda_copy", "67108864")
    cuda = next(r for r in rows if r["kernel"] == "cuda_copy" and r["precision"] == "fp32")
    assert cuda["tflops"] is None and cuda["flops"] == 0
    assert cuda["compulsory_bytes"] == 2 * 4 * 67108864
    assert cuda["pct_roof"] == pytest.approx(100 * cuda["gbps_compulsory"] / COPY_GBPS)
    assert cuda["pct_reference"] == pytest.approx(100 * 0.93 / 0.85, rel=1e-6)
    fp16 = next(r for r in rows if r["kernel"] == "cuda_copy" and r["precision"] == "fp16")
    assert fp16["model_bytes"] == cuda["model_bytes"] // 2      # the model at the row's dtype


def test_figures_and_report_sections(tmp_path):
    rows = fabricated_rows("cuda_*,triton_*,compile_*")
    rows = [r for r in rows if r["op"] != "matmul" or r["shape"] == "256x256x256"]
    pl = payload(rows)
    results.write(tmp_path, "time", pl["rows"], env=pl["env"], meta=pl["meta"])
    made = plots.all_figures(tmp_path, tmp_path / "figures")
    for op in ("vector_add", "copy", "relu_dropout", "softmax", "rgb_to_grey"):
        png, svg = made[f"bandwidth_{op}"]
        assert png.stat().st_size > 20_000 and svg.suffix == ".svg"
    assert "memory_targets" in made
    text = report.write_markdown(tmp_path, made).read_text()
    for heading in ("## Memory-bound ops: bandwidth", "### softmax", "### rgb_to_grey",
                    "## Memory-bound ops: targets", "### bandwidth_softmax", "### memory_targets"):
        assert heading in text, heading
    assert "## Throughput" not in text or "cuda_vector_add" not in text.split("## Throughput")[1] \
        .split("##")[0]                                  # the TFLOP/s table stays matmul's


def test_targets_met_and_missed():
    met = report_memory.evaluate_targets(payload(fabricated_rows("cuda_*,triton_*")))
    by = {(t["target"], t["kernel"], t["shape"], t["precision"]): t for t in met}
    assert by[("bandwidth", "cuda_copy", "67108864", "fp32")]["met"]         # 93% >= 90%
    assert by[("bandwidth", "triton_softmax_online", "4096x32768", "fp32")]["met"]  # >= 80%
    assert by[("source shape", "cuda_softmax_row_sram", "3000x3000:dim=0", "fp32")]["met"]
    assert ("bandwidth", "cuda_rgb_to_grey", "3x8192x8192", "u8") not in by   # no rgb target
    slow = fabricated_rows("cuda_*,triton_*", speed={"cuda": 0.88, "triton": 0.95, "eager": 0.9})
    missed = {(t["target"], t["kernel"], t["shape"]) for t in
              report_memory.evaluate_targets(payload(slow)) if not t["met"]}
    assert ("bandwidth", "cuda_vector_add", "67108864") in missed            # 88% < 90%
    assert ("source shape", "cuda_relu_dropout", "1000x1000") in missed       # slower than eager
    assert not any(k.startswith("triton_") and t == "bandwidth" for t, k, _s in missed)
    text = report_memory.section_targets(payload(slow))
    assert "**MISSED**" in text and "explained with the counters" in text


def test_profile_section_compares_dram_with_the_model():
    row = dict(kernel="cuda_softmax_online", op="softmax", backend="cuda", shape="4096x32768",
               precision="fp32", status="ok", compulsory_bytes=2**30,
               model_global_load_bytes=2**30, dram_read_bytes=2**29 * 1.02,
               dram_write_bytes=2**29, l2_bytes=2**30, issued_bytes=2**30, ncu_time_ms=0.4)
    text = report_memory.section_profile({"rows": [row]})
    assert "DRAM traffic versus the model" in text and "| 1.010 |" in text
    from bench.families.matmul import report as matmul_report

    assert matmul_report.section_profile({"rows": [row]}) == ""      # not in the matmul table


def test_a_miss_within_the_iqr_is_labelled_as_such():
    from bench.families.memory import report as rm

    assert rm.within_noise(5.81e-3, 0.7e-3, 5.76e-3, 0.6e-3)       # 0.05 us slower, IQR 0.7 us
    assert not rm.within_noise(6.40e-3, 0.3e-3, 5.60e-3, 0.3e-3)   # 0.8 us slower
    assert not rm.within_noise(float("nan"), 0.1, 1.0, 0.1)


@pytest.mark.parametrize("shape,dim", [((7, 33), -1), ((5, 200), 0), ((4, 3, 5), 1), ((9,), 0)],
                         ids=str)
def test_softmax_error_by_row_blocks_equals_the_whole(shape, dim, monkeypatch):
    """SoftmaxProblem.error takes the float64 reference row block by row block (a 4096 x
    393216 input would need ~70 GiB at once): with blocks of a few rows, the same error as
    in one block, and a NaN where the reference has none still counts as infinitely wrong."""
    import torch

    from bench.families.memory import problems as memory_problems

    problem = problems.get("softmax")
    g = torch.Generator().manual_seed(0)
    x = torch.randn(*shape, generator=g) * 3
    out = torch.softmax(x, dim).half().float()                # rounded: a nonzero error
    whole = problem.error(out, (x, dim))
    monkeypatch.setattr(memory_problems, "SOFTMAX_ERROR_BLOCK", 2 * x.shape[dim])
    assert problem.error(out, (x, dim)) == whole > 0
    out.view(-1)[-1] = float("nan")
    assert problem.error(out, (x, dim)) == float("inf")
