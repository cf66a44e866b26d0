"""Writes tests/support/data/sample_results/: a SMALL, FABRICATED result set for the plot and
report tests. The numbers are invented to look like an H100 run (ceilings from docs/DESIGN.md,
"Ceilings"; throughputs of the right order); they are NOT measurements. Every file says so in its
meta["note"]. Regenerate with:  python -m tests.support.data.make_sample
"""
from __future__ import annotations

import math
from pathlib import Path

from bench import model_table, problems, registry, results

OUT = Path(__file__).resolve().parent / "sample_results"
NOTE = "TEST DATA: fabricated numbers for the harness tests, not a measurement"
ENV = {"date_utc": "2026-11-22T12:00:00Z", "device": "cuda", "git_sha": "testdata",
       "python": "3.12", "torch": "2.11.0+cu130", "triton": "3.6.0", "numpy": "2.5.0",
       "gpu": "NVIDIA H100 80GB HBM3 (fabricated)", "sm_count": 132,
       "compute_capability": "9.0", "cuda_runtime": "13.0", "driver": "580.00",
       "sm_clock_max_mhz": 1980, "sm_clock_mhz_before": 1980, "sm_clock_mhz_after": 1965}
CEILINGS = {"copy_bytes": 1 << 30, "copy_ms": 0.711, "copy_iqr_ms": 0.002, "copy_gbps": 3020.0,
            "cublas_shape": "4096x4096x4096",
            "cublas_tflops": {"fp32": 51.7, "tf32": 369.0, "fp16": 707.0, "bf16": 736.0},
            "fp32_nominal_peak_tflops": 66.9}
SIZES = (256, 512, 1024, 2048, 4096)
# Invented TFLOP/s at 4096 and a saturating curve towards it.
PEAK = {"cuda_v1_naive": 0.14, "cuda_v1_coalesced": 2.6, "cuda_v1.5_thread_tiling": 4.1,
        "cuda_v2_register_tiling": 7.9, "cuda_v3_smem_tiling": 24.0,
        "triton_v1_naive": 0.9, "triton_v1.5_thread_tiling": 3.2,
        "triton_v2_register_tiling": 9.5, "triton_v3_smem_tiling": 30.5, "cublas": 51.7}
TWINS = {"cuda_v1_naive": "triton_v1_naive", "cuda_v1.5_thread_tiling": "triton_v1.5_thread_tiling",
         "cuda_v2_register_tiling": "triton_v2_register_tiling",
         "cuda_v3_smem_tiling": "triton_v3_smem_tiling"}


def _kernels():
    cuda = {k.name: k for k in registry.kernels()}
    out = []
    for name in PEAK:
        if name.startswith("triton"):
            twin_of = next(c for c, t in TWINS.items() if t == name)
            out.append(dict(kernel=name, backend="triton", version=cuda[twin_of].version,
                            twin=twin_of, model=cuda[twin_of]))
        else:
            k = cuda[name]
            out.append(dict(kernel=name, backend=k.backend, version=k.version,
                            twin=k.twin or "", model=k if k.model else None))
    return out


def time_rows():
    mm = problems.get("matmul")
    rows = []
    for n in SIZES:
        shape = mm.parse_shape(f"{n}x{n}x{n}")
        for k in _kernels():
            precs = ["fp32", "tf32", "fp16", "bf16"] if k["kernel"] == "cublas" else ["fp32"]
            for p in precs:
                peak = CEILINGS["cublas_tflops"][p] if k["kernel"] == "cublas" else PEAK[k["kernel"]]
                tflops = peak * (1 - math.exp(-n / 900))
                flops = mm.useful_flops(shape)
                ms = flops / (tflops * 1e12) * 1e3
                comp = mm.compulsory_bytes(shape, p)
                t = k["model"].traffic(shape) if k["model"] else None
                mb = t.global_load_bytes + t.global_store_bytes if t else None
                rows.append(dict(kernel=k["kernel"], backend=k["backend"], version=k["version"],
                                 op="matmul", twin=k["twin"], shape=str(shape), size=float(n),
                                 precision=p, flops=flops, compulsory_bytes=comp,
                                 model_bytes=mb, median_ms=ms, q1_ms=ms * 0.99,
                                 q3_ms=ms * 1.01, min_ms=ms * 0.98, reps=20, iqr_ms=ms * 0.02,
                                 tflops=tflops, gbps_compulsory=comp / ms / 1e6,
                                 gbps_model=mb / ms / 1e6 if mb else None, sm_clock_mhz=1980,
                                 status="ok", note="", is_reference=k["kernel"] == "cublas"))
    from bench import perf

    return perf.derive(rows, CEILINGS)


def profile_rows():
    mm = problems.get("matmul")
    shape = mm.parse_shape("1024x1024x1024")
    rows = []
    # Invented level ratios (bytes at each level / model bytes) that keep the staircase
    # shape docs/DESIGN.md ("Memory traffic, level by level") reports for the naive kernel.
    l1_frac = {"v1": 0.53, "v1c": 0.08, "v1.5": 0.2, "v2": 0.5, "v3": 0.25}
    for k in _kernels():
        if k["model"] is None:
            continue
        t = k["model"].traffic(shape)
        tri = k["backend"] == "triton"
        issued = t.global_loads * (1.0 if not tri else 0.97)
        l1 = t.global_load_bytes * l1_frac[k["version"]] * (0.6 if tri else 1.0)
        l2 = min(l1, t.global_load_bytes) * 0.3
        row = dict(kernel=k["kernel"], backend=k["backend"], version=k["version"], op="matmul",
                   twin=k["twin"], shape=str(shape), size=1024.0, precision="fp32",
                   elem_bytes=4, mnk=1024**3, ncu_kernels=k["kernel"] + "_kernel",
                   ncu_launches=1, issued_elements=issued, issued_bytes=issued * 4,
                   l1_bytes=l1, l1_requests=issued / 32, l2_bytes=l2, l2_all_bytes=l2 * 1.1,
                   dram_read_bytes=8.4e6 * (1.5 if k["version"] == "v1" else 1.0),
                   dram_write_bytes=4.2e6,
                   shared_bytes=t.shared_load_bytes or 0.0,
                   shared_elements=t.shared_loads or None, shared_wavefronts=None,
                   shared_bank_conflicts=0, ffma=t.fma, ncu_time_ms=1.0,
                   model_global_loads=t.global_loads, model_global_load_bytes=t.global_load_bytes,
                   model_shared_loads=t.shared_loads, model_fma=t.fma,
                   compulsory_bytes=t.compulsory_bytes, ratio_issued=issued / t.global_loads,
                   ratio_shared=1.0 if t.shared_loads else None, ratio_ffma=1.0,
                   ratio_dram_compulsory=(12.6e6) / t.compulsory_bytes,
                   target="-" if tri else "PASS", status="ok", note="")
        rows.append(row)
    return rows


def check_rows():
    rows = []
    for k in _kernels():
        for s in ("17x13x7", "127x129x31"):
            rows.append(dict(kernel=k["kernel"], shape=s, precision="fp32", mode="random",
                             error=0.03, tolerance=1.0,
                             status="ok", note=""))
    return rows


def main():
    meta = {"note": NOTE}
    results.write(OUT, "time", time_rows(), env=ENV, meta={**meta, "ceilings": CEILINGS})
    results.write(OUT, "profile", profile_rows(), env=ENV,
                  meta={**meta, "dropped_metrics": [], "metrics": []})
    results.write(OUT, "check", check_rows(), env=ENV, meta=meta)
    results.write(OUT, "model", model_table.rows(registry.kernels()), env=ENV, meta=meta)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
