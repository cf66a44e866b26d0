"""report.md and the figures read at a glance: the summary that opens the report, one
correctness row per kernel x precision, bandwidths that name their level, values above the
copy bandwidth flagged, model bytes at each row's precision, bytes in binary units, and
figures that tell kernels apart. CPU only: the small stored result set in
tests/support/data/sample_results (FABRICATED numbers) and rows made here."""
from __future__ import annotations

import math
import shutil

import pytest

from bench import families, model_table, registry, report, results
from bench.families.matmul import plots as matmul_plots
from bench.families.matmul import report as matmul_report
from bench.families.memory import report as memory_report
from bench.plot_style import BinaryLocator, bytes_fmt
from bench.text import ABOVE_COPY, binary_bytes, count, gbps_flagged
from tests.support import DATA

SAMPLE = DATA / "sample_results"
COPY_GBPS = 3000.0


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample")
    for f in SAMPLE.iterdir():
        shutil.copy(f, out)
    # the report only links the figures: name them without drawing them (test_harness_plots
    # draws them)
    figs = {name: [out / "figures" / f"{name}.png", out / "figures" / f"{name}.svg"]
            for name in ("lecture", "throughput", "traffic", "roofline")}
    return report.write_markdown(out, figs).read_text()


# ---------------------------------------------------------------------------------------
# Units
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    (0, "0 B"), (12, "12 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"),
    (3 * 4 * 1024**2, "12 MiB"), (805306368, "768 MiB"), (2**30, "1 GiB"),
    (1023.9 * 2**20, "1 GiB"), (512 * 2**30, "512 GiB"), (2.25 * 2**40, "2.25 TiB"),
    (float("nan"), "-"), (None, "-")])
def test_bytes_are_written_in_binary_units(value, text):
    assert binary_bytes(value) == text


def test_byte_axes_tick_at_powers_of_two_with_binary_labels():
    ticks = BinaryLocator().tick_values(1e6, 2e12)
    assert all(math.log2(t).is_integer() for t in ticks)
    assert 2 <= len(ticks) <= 11
    labels = [bytes_fmt(t) for t in ticks]
    assert "1 GiB" in labels
    assert all(label.split()[1] in ("KiB", "MiB", "GiB", "TiB") for label in labels)
    assert BinaryLocator(7).tick_values(32 * 1024, 1.1 * 2**30) == [2.0**e for e in (16, 20, 24, 28)]


def test_counts_are_whole_numbers():
    assert count(2409.0) == "2,409" and count(None) == "-" and count(0.0) == "0"


# ---------------------------------------------------------------------------------------
# The summary
# ---------------------------------------------------------------------------------------

def test_the_report_opens_with_a_short_summary(sample_report):
    head = sample_report.split("\n## ")
    assert head[1].startswith("Summary")
    summary = head[1]
    lines = [l for l in summary.splitlines() if l.startswith("- ")]
    assert 5 <= len(lines) <= 14                   # one screen
    assert len(summary) < 4000
    assert "20 of 20 checks passed" in summary
    assert "Ceilings" in summary and "51.7 TFLOP/s" in summary and "3020 GB/s" in summary
    assert "[throughput](figures/throughput.png)" in summary
    assert "binary units" in summary and "matmul" in summary


def test_a_family_without_headlines_adds_no_summary_line():
    class Bare(families.Family):
        name = "bare"

    assert Bare().summary_lines({}) == []
    assert all(isinstance(line, str) and line.startswith("- ")
               for fam in families.families()
               for line in fam.summary_lines(results.load_set(SAMPLE)))


def test_the_summary_puts_the_fastest_cuda_and_triton_fp32_matmuls_side_by_side():
    """The comparison the suite exists for, in one line: at the largest timed size, the
    fastest hand-written CUDA matmul against the fastest Triton one in fp32, with cuBLAS."""
    def row(kernel, backend, version, tflops, pct, reference=False):
        return dict(op="matmul", kernel=kernel, backend=backend, version=version,
                    shape="4096x4096x4096", size=4096**3, precision="fp32", status="ok",
                    tflops=tflops, pct_reference=pct, is_reference=reference)

    rows = [row("cuda_v3_smem_tiling", "cuda", "v3", 31.0, 60.0),
            row("cuda_v7_lean_fetch", "cuda", "v7", 49.0, 95.0),
            row("triton_v3_smem_tiling", "triton", "v3", 31.1, 60.2),
            row("triton_autotuned", "triton", "autotuned", 45.0, 87.0),
            row("cublas", "torch", "cublas", 51.6, 100.0, reference=True),
            dict(row("cuda_v1_naive", "cuda", "v1", 0.5, 1.0), shape="1024x1024x1024",
                 size=1024**3)]
    lines = matmul_report.summary_lines({"time": {"rows": rows}})
    line = next(x for x in lines if "hand-written CUDA against Triton" in x)
    assert "cuda_v7_lean_fetch 49 TFLOP/s (95% of cuBLAS)" in line
    assert "triton_autotuned 45 TFLOP/s (87% of cuBLAS)" in line
    assert "cuBLAS 51.6 TFLOP/s" in line


# ---------------------------------------------------------------------------------------
# Correctness: one row per kernel x precision
# ---------------------------------------------------------------------------------------

def _check_row(kernel, shape, precision, error, tolerance, status="ok", mode="random", note=""):
    return dict(kernel=kernel, shape=shape, precision=precision, mode=mode, error=error,
                tolerance=tolerance, status=status, note=note)


def test_correctness_is_one_row_per_kernel_and_precision():
    rows = [_check_row("cuda_v3_smem_tiling", s, "fp32", e, 1e-6)
            for s, e in (("17x13x7", 2e-7), ("127x129x31", 5e-7), ("1x1x1", 1e-8))]
    rows += [_check_row("cuda_v3_smem_tiling", "17x13x7", "fp32", 0.0, 0.0, mode="exact")]
    rows += [_check_row("triton_grouped", "17x13x7", "fp16", 3e-3, 1e-3, status="FAIL"),
             _check_row("triton_grouped", "17x13x7", "bf16", None, 0.0, status="skip",
                        note="shape 17x13x7 too large for exact bf16")]
    text = report.section_check({"rows": rows})
    table = [l for l in text.splitlines() if l.startswith("| cuda_") or l.startswith("| triton_")]
    assert len(table) == 2                       # the bf16 pair only skipped: no row
    v3 = next(l for l in table if "cuda_v3" in l).split(" | ")
    assert v3[3] == "3: 1x1x1 … 127x129x31"       # shapes, small to large
    assert v3[4] == "4" and v3[5] == "0"          # runs, failures
    assert v3[6] == "0.50" and "127x129x31 (random)" in v3[7]   # 5e-7 of a 1e-6 bound
    grouped = next(l for l in table if "triton_grouped" in l).split(" | ")
    assert grouped[5] == "**1**" and grouped[6] == "**3.00**"
    assert "4 of 5 runs passed, 1 failed, 1 skipped" in text
    assert "too large for exact bf16 (1)" in text
    assert "| worst error / bound |" in text


def test_an_error_just_under_its_bound_never_reads_as_the_bound():
    rows = [_check_row("triton_vector_add", "65537", "fp16", 0.999389 * 4.8828e-4, 4.8828e-4)]
    assert "| 0.999 |" in report.section_check({"rows": rows})


def test_exact_runs_count_as_zero_or_infinite_fractions():
    assert report._fraction_of_bound(_check_row("k", "1", "fp32", 0.0, 0.0, mode="exact")) == 0
    assert math.isinf(report._fraction_of_bound(_check_row("k", "1", "fp32", 1e-7, 0.0,
                                                           mode="exact")))


# ---------------------------------------------------------------------------------------
# Bandwidths: the level they count, and values above the copy bandwidth
# ---------------------------------------------------------------------------------------

def _time_row(kernel, precision, ms, model_bytes, backend="triton", shape="4096x4096x4096"):
    n = int(shape.split("x")[0])
    flops = 2 * n**3
    comp = 3 * n * n * (2 if precision in ("fp16", "bf16") else 4)
    return dict(kernel=kernel, backend=backend, version="x", op="matmul", twin="", shape=shape,
                size=float(n), precision=precision, flops=flops, compulsory_bytes=comp,
                model_bytes=model_bytes, median_ms=ms, iqr_ms=ms / 100, reps=10,
                tflops=flops / ms / 1e9, gbps_compulsory=comp / ms / 1e6,
                gbps_model=model_bytes / ms / 1e6, pct_reference=90.0, pct_roof=90.0,
                status="ok")


def test_matmul_bandwidths_name_their_level_and_flag_values_above_copy():
    fast = _time_row("triton_autotuned", "fp16", 0.2, 1.6e9)     # 8000 GB/s asked for
    slow = _time_row("triton_grouped", "fp32", 3.4, 4.3e9)       # 1265 GB/s
    text = matmul_report.section_time({"rows": [fast, slow],
                                       "meta": {"ceilings": {"copy_gbps": COPY_GBPS}}})
    header = next(l for l in text.splitlines() if l.startswith("| kernel | precision | median"))
    assert "DRAM GB/s, minimum" in header and "issued by threads GB/s" in header
    assert "DRAM GB/s, measured" in header
    detail = text.split(header)[1].splitlines()             # the table at the largest size
    row_fast = next(l for l in detail if l.startswith("| triton_autotuned | fp16"))
    row_slow = next(l for l in detail if l.startswith("| triton_grouped | fp32"))
    assert f"8000{ABOVE_COPY}" in row_fast and ABOVE_COPY not in row_slow
    assert f"{ABOVE_COPY} Above the copy bandwidth" in text and "every load they issue" in text


def test_no_footnote_when_nothing_is_above_copy():
    slow = _time_row("triton_grouped", "fp32", 3.4, 4.3e9)
    text = matmul_report.section_time({"rows": [slow], "meta": {"ceilings": {"copy_gbps": 3e3}}})
    assert ABOVE_COPY not in text


def test_the_measured_dram_bandwidth_comes_from_the_profile_at_that_shape():
    row = _time_row("cuda_v1_naive", "fp32", 275.8, 5.5e11, backend="cuda")
    prof = {"rows": [dict(kernel="cuda_v1_naive", op="matmul", shape="4096x4096x4096",
                          precision="fp32", status="ok", dram_read_bytes=8.45e9,
                          dram_write_bytes=7.58e7)]}
    text = matmul_report.section_time({"rows": [row], "meta": {}}, prof)
    assert "| 30.9 |" in text                    # 8.53 GB / 275.8 ms


def test_gbps_flag_marks_only_values_above_the_ceiling():
    assert gbps_flagged(3031.2, 2999.0) == f"3031{ABOVE_COPY}"
    assert gbps_flagged(2990.0, 2999.0) == "2990"
    assert gbps_flagged(12.34, None) == "12.3"


def test_memory_bandwidth_names_dram_and_flags_above_copy():
    rows = []
    for kernel, backend, version, ms in (("cuda_copy", "cuda", "v", 0.35),
                                         ("torch_copy", "torch", "eager", 0.37)):
        comp = 2 * 4 * 67108864
        rows.append(dict(kernel=kernel, backend=backend, version=version, op="copy",
                         shape="67108864", precision="fp32", compulsory_bytes=comp,
                         median_ms=ms, iqr_ms=0.001, gbps_compulsory=comp / ms / 1e6,
                         pct_roof=100 * comp / ms / 1e6 / COPY_GBPS, status="ok"))
    text = memory_report.section_time({"rows": rows,
                                       "meta": {"ceilings": {"copy_gbps": COPY_GBPS}}})
    assert "DRAM GB/s, minimum" in text
    assert f"1534{ABOVE_COPY}" not in text and ABOVE_COPY not in text.split("### copy")[1] \
        .split("cuda_copy")[0]
    fast = dict(rows[0], median_ms=0.17, gbps_compulsory=2 * 4 * 67108864 / 0.17 / 1e6)
    text = memory_report.section_time({"rows": [fast, rows[1]],
                                       "meta": {"ceilings": {"copy_gbps": COPY_GBPS}}})
    assert f"3158{ABOVE_COPY}" in text and "not the memory's peak" in text


# ---------------------------------------------------------------------------------------
# Issued/model: vector loads and TMA explained on the page
# ---------------------------------------------------------------------------------------

def _profile_row(**kw):
    row = dict(kernel="triton_persistent", backend="triton", version="persistent", op="matmul",
               shape="1024x1024x1024", precision="tf32", status="ok", elem_bytes=4,
               mnk=1024**3, model_global_loads=12582912, issued_elements=0.0,
               ratio_issued=0.0, l1_bytes=0.0, l2_bytes=3.35e7, dram_read_bytes=8.4e6,
               dram_write_bytes=256.0, shared_elements=8.4e6, ratio_shared=0.667,
               shared_bank_conflicts=262144.0, ffma=0.0, target="-", note="")
    row.update(kw)
    return row


def test_a_tma_kernel_reads_as_tma_not_as_zero_loads():
    text = matmul_report.section_profile({"rows": [_profile_row()], "meta": {}})
    assert "| 0 (TMA) | - (TMA) |" in text
    assert "cp.async.bulk.tensor" in text and "do not go through the LSU pipe" in text
    assert "issues 0x" not in text


def test_vector_loads_are_explained_next_to_the_ratio():
    row = _profile_row(kernel="triton_v3_smem_tiling", precision="fp32", issued_elements=4194304.0,
                       ratio_issued=0.25, l1_bytes=67108864.0,
                       note="issued = warp instructions x 32 (thread-level metric unavailable)")
    text = matmul_report.section_profile({"rows": [row], "meta": {}})
    assert "| 0.2500 |" in text and "16-byte vector load moves 4 fp32" in text
    assert "each warp instruction counts as 32 lanes" in text
    mem = dict(kernel="cuda_copy", op="copy", backend="cuda", shape="67108864",
               precision="fp32", status="ok", compulsory_bytes=2**29,
               model_global_load_bytes=2**28, issued_bytes=2**28, ratio_issued=0.25,
               l2_bytes=2**28, dram_read_bytes=2**28, dram_write_bytes=2**28 * 0.92,
               ncu_time_ms=0.18)
    text = memory_report.section_profile({"rows": [mem]})
    assert "| 0.2500 |" in text and "Why issued/model reads 0.25" in text
    assert "| 512 MiB | 256 MiB | 256 MiB |" in text


# ---------------------------------------------------------------------------------------
# Models at each row's precision
# ---------------------------------------------------------------------------------------

def test_model_bytes_follow_the_precision_of_the_row():
    kernel = registry.get("triton_autotuned")
    mm = __import__("bench.problems", fromlist=["get"]).get("matmul")
    shape = mm.parse_shape("4096x4096x4096")
    fp32 = kernel.traffic(shape, "fp32")
    stale = _time_row("triton_autotuned", "fp16", 0.2,
                      fp32.global_load_bytes + fp32.global_store_bytes)   # fp32 bytes: wrong
    fixed = model_table.at_row_precision({"time": {"rows": [stale]}})["time"]["rows"][0]
    fp16 = kernel.traffic(shape, "fp16")
    assert fixed["model_bytes"] == fp16.global_load_bytes + fp16.global_store_bytes
    assert fixed["gbps_model"] == pytest.approx(fixed["model_bytes"] / 0.2e-3 / 1e9)
    assert fixed["model_bytes"] < stale["model_bytes"]


def test_profile_model_columns_follow_the_precision_and_keep_the_verdict():
    row = _profile_row(model_global_load_bytes=25165824, compulsory_bytes=6291456,
                       target="PASS")                        # stored at fp16's element size
    fixed = model_table.at_row_precision({"profile": {"rows": [row]}})["profile"]["rows"][0]
    mm = __import__("bench.problems", fromlist=["get"]).get("matmul")
    t = registry.get("triton_persistent").traffic(mm.parse_shape("1024x1024x1024"), "tf32")
    assert fixed["model_global_load_bytes"] == t.global_load_bytes
    assert fixed["compulsory_bytes"] == 3 * 1024 * 1024 * 4
    assert fixed["target"] == "PASS"


def test_rows_of_unknown_kernels_keep_their_columns():
    row = _time_row("no_such_kernel", "fp16", 1.0, 123.0)
    assert model_table.at_row_precision({"time": {"rows": [row]}})["time"]["rows"][0] == row


def test_the_model_section_names_each_rows_precision():
    rows = [dict(kernel="triton_persistent", shape="1024x1024x1024",
                 params="BLOCK_M=128 precision=fp16", formula="", global_loads=1,
                 lecture_global_loads=None, global_load_bytes=2, global_stores=1,
                 shared_loads=0, shared_load_bytes=0, fma=1, compulsory_bytes=2**20,
                 elem_bytes=2)]
    text = report.section_model({"rows": rows})
    assert "| triton_persistent | 1024x1024x1024 | fp16 | BLOCK_M=128 |" in text
    assert "| 1 MiB |" in text


# ---------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------

def test_tensor_core_kernels_get_a_colour_each():
    tc = [dict(kernel=k, backend="triton", version=v, op="matmul", precision=p)
          for k, v in (("triton_grouped", "grouped"), ("triton_autotuned", "autotuned"),
                       ("triton_batched", "batched"), ("triton_persistent", "persistent"))
          for p in ("tf32", "fp16", "bf16")]
    tc += [dict(kernel="cublas", backend="cublas", version="cublas", op="matmul", precision=p)
           for p in ("tf32", "fp16", "bf16")]
    styles = matmul_plots.tensor_styles(tc, tc)
    assert len(styles) == 5
    assert len({s["color"] for s in styles.values()}) == 5
    assert len({s["marker"] for s in styles.values()}) == 5
    assert styles["cublas"]["color"] == "black"


def test_memory_rows_do_not_shift_the_ladder_colours():
    rows = results.read(SAMPLE, "time")["rows"]
    _o, _v, alone = matmul_plots.ladder(rows)
    memory = [dict(kernel="cuda_copy", backend="cuda", version="copy", op="copy")]
    _o, _v, mixed = matmul_plots.ladder(memory + rows)
    assert alone == mixed


def test_drawn_at_the_size_where_dram_tells_kernels_apart():
    def p(kernel, shape, dram):
        return dict(kernel=kernel, shape=shape, size=float(shape.split("x")[0]),
                    dram_read_bytes=dram, dram_write_bytes=0.0)

    rows = [p(k, "1024x1024x1024", 8.4e6) for k in ("a", "b", "c")]
    assert matmul_plots.contrast_shape(rows) == "1024x1024x1024"       # the only size
    rows += [p("a", "4096x4096x4096", 8.4e9), p("b", "4096x4096x4096", 3.5e8)]
    assert matmul_plots.contrast_shape(rows) == "4096x4096x4096"
    flat = rows[:3] + [p("a", "2048x2048x2048", 5e7), p("b", "2048x2048x2048", 5.1e7)]
    assert matmul_plots.contrast_shape(flat) == "1024x1024x1024"       # 2048: all alike


def test_the_default_roofline_and_traffic_figure_use_that_size(tmp_path):
    for f in SAMPLE.iterdir():
        shutil.copy(f, tmp_path)
    prof = results.read(tmp_path, "profile")
    timing = results.read(tmp_path, "time")
    big = "2048x2048x2048"
    extra = [dict(r, shape=big, size=2048.0,
                  dram_read_bytes=(r.get("dram_read_bytes") or 1e6) * (40 if "v1" in r["version"]
                                                                      else 8))
             for r in prof["rows"]]
    both = dict(prof, rows=prof["rows"] + extra)
    svg = matmul_plots.roofline(timing, tmp_path, both)[1].read_text()
    assert big in svg and "1024x1024x1024" not in svg
    assert "fp32: FFMA on CUDA cores" in svg and "tf32: tensor cores" in svg
    traffic = matmul_plots.traffic(both, tmp_path)[1].read_text()
    assert big in traffic and "MiB" in traffic and " MB" not in traffic


def _timed(kernel, backend, ms, dobench, ref=False, precision="tf32", shape="4096x4096x4096"):
    return dict(kernel=kernel, backend=backend, op="matmul", shape=shape, precision=precision,
                status="ok", is_reference=ref, median_ms=ms, dobench_ms=dobench)


def test_the_cross_check_sets_both_timers_ratios_side_by_side():
    from bench import perf, report

    rows = [_timed("cublas", "cublas", 0.35, 0.36, ref=True),
            _timed("triton_persistent", "triton", 0.37, 0.38),       # agrees
            _timed("triton_autotuned", "triton", 0.50, 0.60),        # 17% apart
            _timed("tiny", "triton", 0.01, None)]                    # not cross-checked
    for r in rows:
        r.update(flops=2 * 4096 ** 3, compulsory_bytes=1, size=4096 ** 3)
    perf.derive(rows, {})
    assert rows[1]["dobench_pct_reference"] == pytest.approx(100 * 0.36 / 0.38)
    text = report.section_crosscheck({"rows": rows})
    assert "1 of 2 rows agree within 3%" in text
    assert "triton_autotuned 4096x4096x4096 tf32 do not" in text
    rows[0]["note"] = "throttled: SM clock 1980 -> 1515 MHz during the timing"
    assert "tf32 (the SM clock fell during this timing" in report.section_crosscheck({"rows": rows})
    line = report._crosscheck_line({"rows": rows})
    assert "1 of 2 kernels" in line and "triton_autotuned" in line
    assert report.section_crosscheck({"rows": rows[:1]}) == ""
    assert "alternating rounds" not in text           # --alternate off: no such column
    rows[2]["alternating_pct_reference"] = 97.5       # bench time --alternate R
    text = report.section_crosscheck({"rows": rows})
    assert "| alternating rounds % of reference |" in text and "| 97.5 |" in text
    assert "tiny" not in text
    # a row of 0.1-0.2 ms: alternating rounds, no do_bench; it joins the table with '-' for
    # do_bench and is not counted among the rows the two timers compare
    rows.append(dict(_timed("cuda_t5_stream_k", "cuda", 0.18, None, precision="bf16"),
                     pct_reference=97.8, alternating_pct_reference=99.1))
    text = report.section_crosscheck({"rows": rows})
    assert "| cuda_t5_stream_k | 4096x4096x4096 | bf16 | 0.1800 | - | 97.8 | - | - | 99.1 |" in text
    assert "1 of 2 rows agree within 3%" in text and "no do_bench ('-')" in text
    assert "cuda_t5_stream_k" not in report._crosscheck_line({"rows": rows})


def test_twins_sit_side_by_side_with_registers_shared_memory_and_instructions():
    from bench.families.matmul import report as mr

    def prof(kernel, backend, twin, regs, inst, version="v3"):
        return dict(kernel=kernel, backend=backend, version=version, twin=twin, op="matmul",
                    shape="1024x1024x1024", precision="fp32", status="ok", registers=regs,
                    smem_static_bytes=8320, smem_dynamic_bytes=0, block_threads=256,
                    warp_inst=inst, ffma=2 ** 30)

    profile = {"rows": [prof("cuda_v3_smem_tiling", "cuda", "triton_v3_smem_tiling", 128, 5e7),
                        prof("triton_v3_smem_tiling", "triton", "cuda_v3_smem_tiling", 96, 6e7),
                        prof("cuda_v7_lean_fetch", "cuda", "", 235, 4e7, "v7"),
                        prof("triton_autotuned", "triton", "", 200, 4.5e7, "autotuned")]}
    time = {"rows": [dict(kernel=k, backend=b, op="matmul", shape="1024x1024x1024",
                          precision="fp32", status="ok", median_ms=ms, tflops=2 / ms,
                          pct_reference=50.0)
                     for k, b, ms in (("cuda_v3_smem_tiling", "cuda", 0.2),
                                      ("triton_v3_smem_tiling", "triton", 0.14),
                                      ("cuda_v7_lean_fetch", "cuda", 0.09),
                                      ("triton_autotuned", "triton", 0.06))]}
    pairs = mr.twin_pairs(profile["rows"], time["rows"])
    assert [(c["kernel"], t["kernel"]) for _what, c, t in pairs] == [
        ("cuda_v3_smem_tiling", "triton_v3_smem_tiling"),
        ("cuda_v7_lean_fetch", "triton_autotuned")]
    text = mr.section_twins(profile, time)
    assert "| v3: same tiles | cuda_v3_smem_tiling | 1024x1024x1024 | fp32 | 128 | 8.12 KiB" in text
    assert "the fastest fp32 kernel of each" in text
    # FFMA share: 2^30 thread FFMAs = 2^25 warp FFMAs out of 5e7 warp instructions
    assert f"{2 ** 25 / 5e7:.3f}" in text


def test_tensor_core_rungs_beside_triton_with_lines_and_stages(tmp_path):
    """The slide "same idea, two languages": every CUDA tensor-core rung profiled, then the
    Triton matmuls at the same precision and shape, with lines of code (comments and blank
    lines not counted) and stages from the kernel's tiles."""
    from bench.families.matmul import report as mr

    src = tmp_path / "k.cu"
    src.write_text("// header\n#include <x>\n\n/* a\n   block */\nint a;\n  // c\nint b; /* x */\n")
    assert mr.code_lines(src) == 2
    py = tmp_path / "k.py"
    py.write_text('"""doc\nstring"""\nimport x\n# c\n\ndef f():\n    """one line"""\n    return 1\n')
    assert mr.code_lines(py) == 3

    def prof(kernel, backend, version, busy):
        return dict(kernel=kernel, backend=backend, version=version, op="matmul",
                    shape="4096x4096x4096", precision="bf16", status="ok", registers=168,
                    smem_dynamic_bytes=230464, block_threads=384, warp_inst=3e7,
                    tensor_active_pct=busy)

    profile = {"rows": [prof("triton_persistent", "triton", "persistent", 92.1),
                        prof("cuda_t3_warp_specialized", "cuda", "t3", 94.0),
                        prof("cuda_v7_lean_fetch", "cuda", "v7", 0.0)]}
    time = {"rows": [dict(kernel=k, op="matmul", shape="4096x4096x4096", precision="bf16",
                          status="ok", tflops=t, pct_reference=p)
                     for k, t, p in (("cuda_t3_warp_specialized", 787.9, 98.9),
                                     ("triton_persistent", 725.6, 99.0))]}
    text = mr.section_tensor_cores(profile, time)
    rows = [line for line in text.splitlines() if line.startswith("| cuda_t3") or
            line.startswith("| triton_persistent")]
    assert rows[0].startswith("| cuda_t3_warp_specialized | bf16 | 4096x4096x4096 | ")
    assert "| 4 | 168 |" in rows[0] and "| 94.0 | 787.9 | 98.9 |" in rows[0]   # 4 stages
    assert "| 3 | 168 |" in rows[1]                           # triton_persistent: num_stages 3
    assert "cuda_v7" not in text                              # FFMA rungs are not in it
    assert mr.section_tensor_cores({"rows": profile["rows"][:1]}, time) == ""
