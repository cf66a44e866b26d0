"""The matmul's sections of report.md: the ceilings, throughput, the traffic models and the
counters against them (bench/families/memory/report.py has the memory-bound ops')."""
from __future__ import annotations

import math

from bench.results import num
from bench.text import f, human_bytes, md_table


def _matmul(rows):
    return [r for r in rows if r.get("op", "matmul") == "matmul"]


def ceiling_rows(c: dict) -> list[list[str]]:
    """The compute ceilings this family measured (bench/families/matmul/__init__.py)."""
    rows = [[f"cuBLAS {p}", f"{f(t, 1)} TFLOP/s", f"at {c.get('cublas_shape')}"]
            for p, t in (c.get("cublas_tflops") or {}).items()]
    if c.get("fp32_nominal_peak_tflops"):
        rows.append(["nominal FP32 peak (not measured)", f"{f(c['fp32_nominal_peak_tflops'], 1)}"
                     " TFLOP/s", "SMs x 128 FMA lanes x 2 x max SM clock"])
    return rows


def section_time(time_payload: dict) -> str:
    mm = _matmul(time_payload["rows"])
    rows = [r for r in mm if r.get("status") == "ok"]
    if not rows:
        return ""
    shapes = sorted(dict.fromkeys(r["shape"] for r in rows), key=lambda s: num(
        next(r["size"] for r in rows if r["shape"] == s)))
    keys = list(dict.fromkeys((r["kernel"], r["precision"]) for r in rows))
    at = {(r["kernel"], r["precision"], r["shape"]): r for r in rows}
    sweep = []
    for k, p in keys:
        line = [k, p]
        for s in shapes:
            r = at.get((k, p, s))
            line.append("" if r is None else f"{f(r['tflops'], 2)} ({f(r['pct_reference'], 0)}%)")
        sweep.append(line)
    big = shapes[-1]
    detail = []
    for k, p in keys:
        r = at.get((k, p, big))
        if r is None:
            continue
        detail.append([k, p, f(r["median_ms"], 4), f(r["iqr_ms"], 4), r["reps"],
                       f(r["tflops"], 2), f(r["pct_reference"], 1, True),
                       f(r["pct_roof"], 1, True), f(r["gbps_compulsory"], 0),
                       f(r.get("gbps_model"), 0)])
    text = ("## Throughput\n\nTFLOP/s (useful 2MNK flops / median time) and, in brackets, "
            "% of cuBLAS at the same shape and precision, timed in the same run. fp32 means "
            "FFMA on CUDA cores (TF32 off); tf32/fp16/bf16 run on tensor cores.\n\n"
            + md_table(["kernel", "precision"] + shapes, sweep)
            + f"\n\nAt {big}: median and interquartile range of the launch time (L2 flushed "
              "before each launch), % of cuBLAS, % of the measured roofline (min(cuBLAS "
              "ceiling, copy bandwidth x compulsory intensity)), and bandwidths: compulsory "
              "bytes / time (what DRAM would have to deliver at minimum) and model bytes / "
              "time (what the threads asked the memory system for).\n\n"
            + md_table(["kernel", "precision", "median ms", "IQR ms", "reps", "TFLOP/s",
                        "% cuBLAS", "% roof", "GB/s compulsory", "GB/s model"], detail))
    return text


def _departures(r: dict) -> list[str]:
    """Facts that say where a kernel's measured traffic leaves its model."""
    out = []
    ri = num(r.get("ratio_issued"))
    if not math.isnan(ri) and abs(ri - 1) > 0.02:
        out.append(f"issues {ri:.3g}x the modelled load instructions")
    ie, ib, eb = num(r.get("issued_elements")), num(r.get("issued_bytes")), num(r.get("elem_bytes"))
    ld_thread = num(r.get("ld_thread_inst"))
    if not math.isnan(ld_thread) and ld_thread > 0 and not math.isnan(ib):
        per = (ib - (num(r.get("ldgsts_bytes")) if not math.isnan(num(r.get("ldgsts_bytes")))
                     else 0)) / ld_thread
        if per > eb * 1.01:
            out.append(f"vector loads: {per:.0f} bytes per load instruction, so fewer "
                       f"instructions than elements")
    if num(r.get("ldgsts_bytes")) > 0:
        out.append(f"{human_bytes(r['ldgsts_bytes'])} copied global->shared asynchronously "
                   "(cp.async), bypassing registers")
    ms = num(r.get("model_shared_loads"))
    sb = num(r.get("shared_bytes"))
    if (math.isnan(ms) or ms == 0) and sb > 0:
        out.append(f"reads {human_bytes(sb)} from shared memory although the algorithm it "
                   "mirrors uses none (the compiler stages data there: tl.dot operands, or a "
                   "layout conversion)")
    rs = num(r.get("ratio_shared"))
    if not math.isnan(rs) and ms > 0 and abs(rs - 1) > 0.02:
        out.append(f"shared loads {rs:.3g}x the model")
    if num(r.get("shared_bank_conflicts")) > 0:
        out.append(f"{f(r['shared_bank_conflicts'])} shared-memory bank conflicts")
    rf = num(r.get("ratio_ffma"))
    if not math.isnan(rf) and abs(rf - 1) > 1e-9:
        out.append(f"FFMA count {rf:.3g}x the model" + (" (tensor cores or padding)"
                                                        if rf < 1 else " (padding)"))
    if not math.isnan(ie) and math.isnan(num(r.get("model_global_loads"))):
        out.append("no model")
    return out


def section_profile(profile_payload: dict) -> str:
    rows = _matmul(profile_payload["rows"])
    if not rows:
        return ""
    ok = [r for r in rows if r.get("status") == "ok"]
    table = []
    for r in ok:
        table.append([r["kernel"], r["shape"], r["precision"], f(r.get("model_global_loads")),
                      f(r.get("issued_elements")), f(r.get("ratio_issued"), 4),
                      human_bytes(r.get("l1_bytes")), human_bytes(r.get("l2_bytes")),
                      human_bytes(r.get("dram_read_bytes")), human_bytes(r.get("dram_write_bytes")),
                      f(r.get("shared_elements")), f(r.get("ratio_shared"), 3),
                      f(r.get("shared_bank_conflicts")), f(r.get("ffma")),
                      f(num(r.get("ffma")) / num(r.get("mnk")) if num(r.get("mnk")) else None, 4),
                      r.get("target", "-")])
    meta = profile_payload.get("meta") or {}
    text = ("## Memory traffic: model versus Nsight Compute\n\n"
            "One launch per row, counters summed over the CUDA kernels inside the measured "
            "NVTX range. issued = thread-level global load instructions (+ elements copied "
            "by cp.async); L1 = bytes requested at L1 (32-byte sectors); L2 = bytes L1 "
            "fetched from L2; DRAM = bytes HBM delivered/absorbed; shared = elements loaded "
            "from shared memory (bytes / element size). Target (CUDA ladder): issued within "
            "2% of the model and FFMA = model FMAs (M·N·K at tile multiples).\n\n"
            + md_table(["kernel", "shape", "prec", "model loads", "issued", "issued/model",
                        "L1", "L2", "DRAM read", "DRAM write", "shared loads",
                        "shared/model", "bank conflicts", "FFMA", "FFMA/MNK", "target"], table))
    dropped = meta.get("dropped_metrics") or []
    if dropped:
        text += ("\n\nMetrics this ncu did not know (dropped, their columns are '-'): "
                 + ", ".join(f"`{m}`" for m in dropped))
    errors = [r for r in rows if r.get("status") != "ok"]
    if errors:
        text += "\n\nProfile errors: " + "; ".join(f"{r['kernel']} {r['shape']}: {r.get('note')}"
                                                  for r in errors[:10])
    from bench import registry

    kernels = registry.by_name()
    dep = []
    for r in ok:
        if r["backend"] == "cuda" and r.get("target") == "PASS":
            continue
        facts = _departures(r)
        known = kernels[r["kernel"]].departure if r["kernel"] in kernels else ""
        if facts:
            dep.append(f"- **{r['kernel']}** at {r['shape']} ({r['precision']}): "
                       + "; ".join(facts) + "." + (f" Why: {known}." if known else ""))
    if dep:
        text += ("\n\n### Where the measured traffic departs from the model\n\n"
                 "Computed from the counters above (the CUDA ladder's rows that meet the "
                 "target are not listed):\n\n" + "\n".join(dep))
    return text


def readme_table() -> str:
    """The README's ladder table, from the registry (CUDA ladder rows and their twins)."""
    from bench import registry

    rows = []
    names = registry.by_name()
    for k in registry.kernels():
        if k.backend != "cuda" or k.op != "matmul":
            continue
        twin = (f"`{k.twin}`" if k.twin and k.twin in names
                else (f"none: {k.twin_note}" if k.twin_note else "-"))
        rows.append([k.version, f"`{k.name}`", twin, k.summary, k.formula or "-"])
    return md_table(["version", "CUDA kernel", "Triton twin", "idea",
                     "traffic model (elements read from global memory, N×N×N)"], rows)
