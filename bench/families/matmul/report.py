"""The matmul's sections of report.md: the ceilings, throughput, the traffic models and the
counters against them (bench/families/memory/report.py has the memory-bound ops')."""
from __future__ import annotations

import math

from bench import text
from bench.results import num
from bench.text import binary_bytes, count, f, md_table


def is_ladder_row(r: dict) -> bool:
    """A matmul row of a kernel at the run's own shapes, which the ladder's sections and
    figures show: not of an entry that picks a kernel per shape (cuda_auto, triton_auto:
    their rows carry a "choice" and repeat their pick's), not of a path beside the ladders
    (suite.PATHS: split-K), not of the shape suite (rows that carry "suite": its own section
    and figure, suite_report.py)."""
    from bench.families.matmul.suite import PATHS

    return (r.get("op", "matmul") == "matmul" and not r.get("choice") and not r.get("suite")
            and r.get("kernel") not in PATHS)


def _matmul(rows):
    return [r for r in rows if is_ladder_row(r)]


def _ok_by_key(rows) -> dict:
    """The matmul rows with status ok, by (kernel, shape, precision)."""
    return {(r["kernel"], r["shape"], r["precision"]): r for r in _matmul(rows)
            if r.get("status") == "ok"}


def ceiling_rows(c: dict) -> list[list[str]]:
    """The compute ceilings this family measured (bench/families/matmul/__init__.py)."""
    rows = [[f"cuBLAS {p}", f"{f(t, 1)} TFLOP/s", f"at {c.get('cublas_shape')}"]
            for p, t in (c.get("cublas_tflops") or {}).items()]
    if c.get("fp32_nominal_peak_tflops"):
        rows.append(["nominal FP32 peak (not measured)", f"{f(c['fp32_nominal_peak_tflops'], 1)}"
                     " TFLOP/s", "SMs x FP32 lanes per SM x 2 x max SM clock"])
    return rows


def _largest_shape(rows) -> str:
    return max(rows, key=lambda r: num(r["size"]))["shape"]


def _dram_bytes(profile_payload: dict | None) -> dict:
    """(kernel, shape, precision) -> DRAM bytes read + written in one launch (ncu)."""
    out = {}
    for r in _matmul((profile_payload or {}).get("rows", [])):
        if r.get("status") == "ok":
            dram = num(r.get("dram_read_bytes")) + num(r.get("dram_write_bytes"))
            if not math.isnan(dram):
                out[(r["kernel"], r["shape"], r["precision"])] = dram
    return out


def section_time(time_payload: dict, profile_payload: dict | None = None) -> str:
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
    copy = ((time_payload.get("meta") or {}).get("ceilings") or {}).get("copy_gbps")
    dram = _dram_bytes(profile_payload)
    detail, flagged = [], []
    for k, p in keys:
        r = at.get((k, p, big))
        if r is None:
            continue
        ms = num(r["median_ms"])
        measured = dram.get((k, big, p), math.nan) / (ms * 1e-3) / 1e9
        for v in (r.get("gbps_model"), measured):
            if text.above(v, copy):
                flagged.append(k)
        detail.append([k, p, f(r["median_ms"], 4), f(r["iqr_ms"], 4), r["reps"],
                       f(r["tflops"], 2), f(r["pct_reference"], 1, True),
                       f(r["pct_roof"], 1, True), text.gbps_flagged(r["gbps_compulsory"], copy),
                       text.gbps_flagged(measured, copy),
                       text.gbps_flagged(r.get("gbps_model"), copy)])
    note = (f"\n\n{text.ABOVE_COPY} Above the copy bandwidth measured in this run "
            f"({f(copy, 0)} GB/s, DRAM read + write): no memory of this GPU delivers it. An "
            "issued-by-threads value is the rate the threads would ask of DRAM if every load "
            "they issue went there; L1, shared memory and L2 serve all but the DRAM share "
            "(the traffic section below shows each level's bytes)." if flagged else "")
    text_out = ("## Throughput\n\nTFLOP/s (useful 2MNK flops / median time) and, in "
                "brackets, % of cuBLAS at the same shape and precision, timed in the same run. "
                "fp32 means FFMA on CUDA cores (TF32 off); tf32/fp16/bf16 run on tensor "
                "cores.\n\n"
                + md_table(["kernel", "precision"] + shapes, sweep)
                + f"\n\nAt {big}: median and interquartile range of the launch time (L2 "
                  "flushed before each launch), % of cuBLAS, % of the measured roofline "
                  "(min(cuBLAS ceiling, copy bandwidth x compulsory intensity)), and three "
                  "bandwidths, each of one level: **DRAM, minimum** = compulsory bytes (A and "
                  "B read once, C written once) / time, the least HBM must deliver; **DRAM, "
                  "measured** = the bytes ncu saw HBM read and write in one launch at this "
                  "shape / time (kernels profiled at this shape only); **issued by threads** "
                  "= the model's global loads and stores at the row's precision / time, what "
                  "the threads ask the memory system for.\n\n"
                + md_table(["kernel", "precision", "median ms", "IQR ms", "reps", "TFLOP/s",
                            "% cuBLAS", "% roof", "DRAM GB/s, minimum", "DRAM GB/s, measured",
                            "issued by threads GB/s"], detail)
                + note)
    return text_out


def summary_lines(s: dict) -> list[str]:
    """The matmul's headline numbers at the largest timed size: the CUDA ladder's first and
    last rungs and the Triton twin of the last, the fastest CUDA against the fastest Triton
    kernel at each precision both have, the fastest Triton kernel per precision
    (each against cuBLAS at the same size and precision), and whether the counters of the
    CUDA ladder met the model."""
    from bench.families.matmul.models import is_ladder, ladder_order

    out = []
    rows = [r for r in _matmul((s.get("time") or {}).get("rows", [])) if r.get("status") == "ok"
            and num(r.get("tflops")) > 0]
    if rows:
        big = _largest_shape(rows)
        at = [r for r in rows if r["shape"] == big]

        def pct(r):
            share = num(r.get("pct_reference"))
            share = f"{share:.0f}" if share >= 10 else f"{share:.2g}"
            return f"{num(r['tflops']):.3g} TFLOP/s ({share}% of cuBLAS)"

        ladder = sorted((r for r in at if r["backend"] == "cuda" and r["precision"] == "fp32"
                         and is_ladder(r["version"])),
                        key=lambda r: ladder_order(r["version"]))
        if ladder:
            top = ladder[-1]
            twin = next((r for r in at if r["kernel"] == top.get("twin")
                         and r["precision"] == "fp32"), None)
            out.append(f"- **matmul, the lecture's ladder** at {big}, fp32 (FFMA): CUDA "
                       f"{ladder[0]['version']} {pct(ladder[0])} up to {top['version']} "
                       f"{pct(top)}" + (f"; its Triton twin {pct(twin)}" if twin else "") + ".")
        for p in dict.fromkeys(r["precision"] for r in at):
            here = [r for r in at if r["precision"] == p]
            cuda = [r for r in here if r["backend"] == "cuda"]
            tri = [r for r in here if r["backend"] == "triton"]
            ref = next((r for r in here if r.get("is_reference")), None)
            if cuda and tri:
                c = max(cuda, key=lambda r: num(r["tflops"]))
                t = max(tri, key=lambda r: num(r["tflops"]))
                how = "FFMA" if p == "fp32" else "tensor cores"
                out.append(f"- **matmul {p} ({how}), hand-written CUDA against Triton** at "
                           f"{big}: the fastest CUDA kernel {c['kernel']} {pct(c)}, the fastest "
                           f"Triton kernel {t['kernel']} {pct(t)}"
                           + (f"; cuBLAS {num(ref['tflops']):.3g} TFLOP/s" if ref else "") + ".")
        best = []
        for p in dict.fromkeys(r["precision"] for r in at):
            tri = [r for r in at if r["backend"] == "triton" and r["precision"] == p]
            if tri:
                r = max(tri, key=lambda r: num(r["tflops"]))
                best.append(f"{p} {r['kernel']} {pct(r)}")
        if best:
            out.append(f"- **matmul, fastest Triton kernel per precision** at {big}: "
                       + "; ".join(best) + ".")
    prof = [r for r in _matmul((s.get("profile") or {}).get("rows", []))
            if r.get("status") == "ok" and r.get("target") in ("PASS", "FAIL")]
    if prof:
        passed = sum(r["target"] == "PASS" for r in prof)
        out.append(f"- **matmul, counters**: the CUDA ladder's issued loads and FFMAs (the "
                   f"tensor-core rungs: mma instructions) match the closed-form model in "
                   f"{passed} of {len(prof)} profiled launches.")
    return out


def _departures(r: dict) -> list[str]:
    """Facts that say where a kernel's measured traffic leaves its model."""
    out = []
    ri = num(r.get("ratio_issued"))
    if tma_loads(r):
        out.append("no load instruction reads global memory: its tiles come by TMA "
                   "(cp.async.bulk.tensor), which the LSU counters behind issued and L1 do "
                   "not see; L2 and DRAM count its bytes")
    elif not math.isnan(ri) and abs(ri - 1) > 0.02:
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
        out.append(f"{binary_bytes(r['ldgsts_bytes'])} copied global->shared asynchronously "
                   "(cp.async), bypassing registers")
    ms = num(r.get("model_shared_loads"))
    sb = num(r.get("shared_bytes"))
    if (math.isnan(ms) or ms == 0) and sb > 0:
        out.append(f"reads {binary_bytes(sb)} from shared memory although the algorithm it "
                   "mirrors uses none (the compiler stages data there: tl.dot operands, or a "
                   "layout conversion)")
    rs = num(r.get("ratio_shared"))
    if not math.isnan(rs) and ms > 0 and abs(rs - 1) > 0.02:
        out.append(f"shared loads {rs:.3g}x the model")
    if num(r.get("shared_bank_conflicts")) > 0:
        out.append(f"{count(r['shared_bank_conflicts'])} shared-memory bank conflicts")
    rf = num(r.get("ratio_ffma"))
    if not math.isnan(rf) and abs(rf - 1) > 1e-9:
        out.append(f"FFMA count {rf:.3g}x the model" + (" (tensor cores or padding)"
                                                        if rf < 1 else " (padding)"))
    if not math.isnan(ie) and math.isnan(num(r.get("model_global_loads"))):
        out.append("no model")
    return out


def tma_loads(r: dict) -> bool:
    """A launch that moved bytes through L2 without one load instruction of its threads:
    its loads are TMA copies (cp.async.bulk.tensor), which the LSU counters do not see."""
    return num(r.get("issued_elements")) == 0 and num(r.get("l2_bytes")) > 0


ISSUED_EXPLAINED = (
    "**Reading issued/model.** The model counts elements; the counters count instructions: "
    "issued = global load instructions executed, one per lane{lanes}, plus the elements "
    "copied by cp.async. That is one element per load only for scalar loads: a 16-byte "
    "vector load moves 4 fp32 (8 fp16 or bf16) per lane in one instruction, so a kernel "
    "that loads only that way reads 0.25 (0.125) while it moves exactly the modelled bytes "
    "(the L1 column). TMA loads (cp.async.bulk.tensor: the tensor-memory accelerator copies "
    "a whole tile from global to shared memory) are no load instructions and do not go "
    "through the LSU pipe these counters read: a TMA kernel shows 0 issued and 0 at L1, "
    "while L2 and DRAM count its bytes.")


def issued_text(r: dict) -> tuple[str, str]:
    """(issued, issued/model) cells of a profile row; a TMA kernel's say so."""
    if tma_loads(r):
        return "0 (TMA)", "- (TMA)"
    return count(r.get("issued_elements")), f(r.get("ratio_issued"), 4)


def lanes_note(rows) -> str:
    """How issued was counted where the thread-level counter was missing (bench/profile.py)."""
    if any("warp instructions x 32" in (r.get("note") or "") for r in rows):
        return (" (this ncu has no thread-level counter: each warp instruction counts as "
                "32 lanes)")
    return ""


def section_profile(profile_payload: dict) -> str:
    rows = _matmul(profile_payload["rows"])
    if not rows:
        return ""
    ok = [r for r in rows if r.get("status") == "ok"]
    table = []
    for r in ok:
        issued, ratio = issued_text(r)
        mnk = num(r.get("mnk"))
        table.append([r["kernel"], r["shape"], r["precision"], count(r.get("model_global_loads")),
                      issued, ratio, binary_bytes(r.get("l1_bytes")),
                      binary_bytes(r.get("l2_bytes")), binary_bytes(r.get("dram_read_bytes")),
                      binary_bytes(r.get("dram_write_bytes")), count(r.get("shared_elements")),
                      f(r.get("ratio_shared"), 3), count(r.get("shared_bank_conflicts")),
                      count(r.get("ffma")),
                      f(num(r.get("ffma")) / mnk if mnk else None, 4), r.get("target", "-")])
    meta = profile_payload.get("meta") or {}
    text_out = ("## Memory traffic: model versus Nsight Compute\n\n"
                "One launch per row, counters summed over the CUDA kernels inside the measured "
                "NVTX range; from what the threads ask for down to what HBM delivers. "
                "**model** = global loads the threads issue, closed form (elements, at the "
                "row's precision); **issued** = the same, counted by the hardware (elements); "
                "**L1** = bytes requested at L1 (32-byte sectors); **L2** = bytes L1 fetched "
                "from L2; **DRAM** = bytes HBM delivered / absorbed; **shared** = elements "
                "loaded from shared memory (bytes / element size). Target (CUDA ladder): "
                "issued within 2% of the model and FFMA = model FMAs (M·N·K at tile "
                "multiples).\n\n"
                + md_table(["kernel", "shape", "prec", "model: loads (threads)",
                            "issued (threads)", "issued/model", "L1 requested", "L2 -> L1",
                            "DRAM read", "DRAM write", "shared loads", "shared/model",
                            "bank conflicts", "FFMA", "FFMA/MNK", "target"], table)
                + "\n\n" + ISSUED_EXPLAINED.format(lanes=lanes_note(ok)))
    dropped = meta.get("dropped_metrics") or []
    if dropped:
        text_out += ("\n\nMetrics this ncu did not know (dropped, their columns are '-'): "
                     + ", ".join(f"`{m}`" for m in dropped))
    errors = [r for r in rows if r.get("status") != "ok"]
    if errors:
        text_out += "\n\nProfile errors: " + "; ".join(
            f"{r['kernel']} {r['shape']}: {r.get('note')}" for r in errors[:10])
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
        text_out += ("\n\n### Where the measured traffic departs from the model\n\n"
                 "Computed from the counters above (the CUDA ladder's rows that meet the "
                 "target are not listed):\n\n" + "\n".join(dep))
    return text_out


def _smem(r: dict) -> float:
    """Shared memory per block (static + dynamic bytes), NaN where ncu said neither."""
    parts = [num(r.get(k)) for k in ("smem_static_bytes", "smem_dynamic_bytes")]
    known = [v for v in parts if not math.isnan(v)]
    return sum(known) if known else math.nan


def _launch_cells(r: dict) -> list[str]:
    """A profiled launch's registers, shared memory, threads per block and warp instructions,
    as the two-language tables print them."""
    return [count(r.get("registers")), binary_bytes(_smem(r)), count(r.get("block_threads")),
            count(r.get("warp_inst"))]


def twin_pairs(profile_rows: list[dict], time_rows: list[dict]) -> list[tuple[str, dict, dict]]:
    """(what, CUDA row, Triton row) at each profiled shape: every CUDA kernel and its Triton
    twin (the same tile algorithm), then at each precision profiled the fastest CUDA kernel
    against the fastest Triton kernel (by the time of the same shape in the timing rows,
    where timed): fp32 on FFMA, fp16 and bf16 on tensor cores."""
    ok = [r for r in _matmul(profile_rows) if r.get("status") == "ok"]
    at = _ok_by_key(profile_rows)
    pairs = []
    for r in ok:
        t = at.get((r.get("twin"), r["shape"], r["precision"]))
        if r["backend"] == "cuda" and r.get("twin") and t is not None:
            pairs.append((f"{r['version']}: same tiles", r, t))
    timed = [r for r in _matmul(time_rows) if r.get("status") == "ok"
             and num(r.get("median_ms")) > 0]
    for precision in dict.fromkeys(r["precision"] for r in ok):
        for shape in dict.fromkeys(r["shape"] for r in ok):
            here = [r for r in timed if r["shape"] == shape and r["precision"] == precision]
            best = [min((r for r in here if r["backend"] == b), default=None,
                        key=lambda r: num(r["median_ms"])) for b in ("cuda", "triton")]
            if None in best:
                continue
            c, t = (at.get((r["kernel"], shape, precision)) for r in best)
            if c is not None and t is not None and c.get("twin") != t["kernel"]:
                pairs.append((f"the fastest {precision} kernel of each (different tiles)", c, t))
    return pairs


def section_twins(profile_payload: dict, time_payload: dict | None = None) -> str:
    """The same tile algorithm in two languages: what each compiler made of it."""
    trows = (time_payload or {}).get("rows", [])
    pairs = twin_pairs(profile_payload.get("rows", []), trows)
    if not pairs:
        return ""
    ms = _ok_by_key(trows)
    table = []
    for what, c, t in pairs:
        for r in (c, t):
            timed = ms.get((r["kernel"], r["shape"], r["precision"]))
            table.append([what if r is c else "", r["kernel"], r["shape"], r["precision"],
                          *_launch_cells(r), count(r.get("ffma")),
                          f(num(r.get("ffma")) / 32 / num(r.get("warp_inst"))
                            if num(r.get("warp_inst")) else None, 3),
                          count(r.get("hmma_warp_inst")), f(r.get("tensor_active_pct"), 1),
                          f(timed["median_ms"], 4) if timed else "-",
                          f(timed["tflops"], 2) if timed else "-",
                          f(timed.get("pct_reference"), 1) if timed else "-"])
    return ("## Same tile algorithm, two languages\n\n"
            "Each CUDA kernel beside its Triton twin, at the profiled shape: what the two "
            "compilers made of one algorithm. **registers** per thread and **shared memory** "
            "per block (static + dynamic) as launched, **threads** per block, **warp "
            "instructions** issued over the whole launch, the FFMA instructions (thread "
            "level) among them, and **FFMA share** = FFMA warp instructions / all warp "
            "instructions (1 would be a loop of nothing but FFMA); at fp16 and bf16 the "
            "**tensor-pipe instructions** instead (warp level: an mma.sync m16n8k16 is 2048 "
            "multiply-adds, a Hopper wgmma up to 64 x 256 x 16) and how busy the tensor pipe "
            "was (% of its peak while the SMs were active). Counters from Nsight "
            "Compute (one launch; for a launch of several kernels the largest registers and "
            "shared memory, the summed instructions); time, TFLOP/s and % of cuBLAS from the "
            "timing of the same shape in this run.\n\n"
            + md_table(["pair", "kernel", "shape", "precision", "registers", "shared memory",
                        "threads", "warp instructions", "FFMA (threads)", "FFMA share",
                        "tensor-pipe instructions", "tensor pipe busy %",
                        "median ms", "TFLOP/s", "% cuBLAS"], table))


def code_lines(path) -> int:
    """Lines of code in a kernel's source file: neither blank, nor comment (// or #), nor
    inside a /* */ comment or a Python docstring. What a reader of the kernel reads, without
    the building blocks it includes (cuda/mma.cuh, cuda/hopper.cuh)."""
    from pathlib import Path

    lines, skip = 0, None
    for raw in Path(path).read_text().splitlines():
        line = raw.strip()
        if skip:
            if skip in line:
                skip = None
            continue
        if not line or line.startswith(("//", "#")):
            continue
        for opener in ('"""', "/*"):
            closer = '"""' if opener == '"""' else "*/"
            if line.startswith(opener):
                rest = line[len(opener):]
                if closer not in rest:
                    skip = closer
                break
        else:
            lines += 1
    return lines


def _stages(params: dict) -> int | None:
    return params.get("STAGES", params.get("num_stages"))


def section_tensor_cores(profile_payload: dict, time_payload: dict | None = None) -> str:
    """Every tensor-core kernel profiled at bf16, fp16 or tf32, the CUDA rungs first, then the
    Triton matmuls at the same precision and shape: the slide "same idea, two languages"."""
    from bench import registry
    from bench.families.matmul.models import is_tensor_core

    trows = (time_payload or {}).get("rows", [])
    ms = _ok_by_key(trows)
    ok = [r for r in _matmul(profile_payload.get("rows", [])) if r.get("status") == "ok"
          and r["precision"] in ("bf16", "fp16", "tf32")]
    names = registry.by_name()
    cuda = [r for r in ok if r["backend"] == "cuda" and is_tensor_core(r.get("version"))]
    if not cuda:
        return ""
    table = []
    for precision in ("bf16", "fp16", "tf32"):
        for shape in dict.fromkeys(r["shape"] for r in cuda if r["precision"] == precision):
            here = [r for r in ok if r["precision"] == precision and r["shape"] == shape
                    and (r in cuda or r["backend"] == "triton")]
            for r in sorted(here, key=lambda r: (r["backend"] != "cuda", r["kernel"])):
                k = names.get(r["kernel"])
                timed = ms.get((r["kernel"], shape, precision))
                table.append([r["kernel"], precision, shape,
                              count(code_lines(k.source)) if k else "-",
                              count(_stages(k.tile_params(precision))) if k else "-",
                              *_launch_cells(r), f(r.get("tensor_active_pct"), 1),
                              f(timed["tflops"], 1) if timed else "-",
                              f(timed.get("pct_reference"), 1) if timed else "-"])
    return ("## Tensor cores: the same idea in two languages\n\n"
            "Every CUDA tensor-core rung beside the Triton matmuls at the same precision and "
            "shape. **lines**: lines of code of the kernel's file (no comments, no blank "
            "lines; the CUDA rungs' building blocks in cuda/mma.cuh and cuda/hopper.cuh not "
            "counted), **stages** of its shared-memory ring, **registers** per thread, "
            "**shared memory** per block and **threads** per block as launched, **warp "
            "instructions** issued over the launch, and how busy the tensor pipe was (% of "
            "its peak while the SMs were active); counters from Nsight Compute, TFLOP/s and "
            "% of cuBLAS from the timing of the same shape in this run.\n\n"
            + md_table(["kernel", "precision", "shape", "lines", "stages", "registers",
                        "shared memory", "threads", "warp instructions", "tensor pipe busy %",
                        "TFLOP/s", "% cuBLAS"], table))


# The rows of each table of docs/kernels.md (kernel_table): the registry's versions, in order
FAST_TRITON = ("grouped", "autotuned", "batched", "persistent", "ref")
# Paths the auto entries run that are no registry entries (they take only skinny shapes),
# listed with the shape paths: (name, what it is, precisions)
SKINNY_PATHS = (
    ("cuda_skinny", "M or N ≤ 16: warps stream the big operand once along its rows (16 bytes "
                    "a lane), the small one from shared memory, k split over the grid (a path "
                    "`cuda_auto` runs, not a registry entry: it takes only skinny shapes)",
     "fp32, tf32, fp16, bf16"),
    ("triton_skinny", "its Triton twin: programs stream the big operand once in 16-byte "
                      "vectors through FMAs, no tl.dot, k split over the grid (a path "
                      "`triton_auto` runs at fp32 where N ≤ 16 or M = 1, not a registry entry)",
     "fp32, tf32, fp16, bf16"),
)


def kernel_table(rows: str) -> str:
    """A table of docs/kernels.md from the registry (`python -m bench docs` writes it there,
    `python -m bench readme-table` prints them all): rows "ladder" (the FFMA rungs and their
    twins), "tensor-cores", "fast-triton" (the Triton matmuls beside the ladders, and
    cuBLAS) or "shape-paths" (the paths for shapes that are not one big GEMM)."""
    from bench import registry
    from bench.families.matmul.models import is_ladder, is_tensor_core

    names = registry.by_name()
    matmul = [k for k in registry.kernels() if k.op == "matmul"]
    if rows == "ladder":
        body = []
        for k in matmul:
            if k.backend == "cuda" and is_ladder(k.version):
                twin = (f"`{k.twin}`" if k.twin and k.twin in names
                        else (f"none: {k.twin_note}" if k.twin_note else "-"))
                body.append([k.version, f"`{k.name}`", twin, k.summary, k.formula or "-"])
        return md_table(["version", "CUDA kernel", "Triton twin", "idea",
                         "traffic model (elements read from global memory, N×N×N)"], body)
    if rows == "tensor-cores":
        body = [[k.version, f"`{k.name}`", k.summary, ", ".join(k.precisions), k.formula or "-"]
                for k in matmul if k.backend == "cuda" and is_tensor_core(k.version)]
        return md_table(["version", "CUDA kernel", "idea", "precisions",
                         "traffic model (N×N×N)"], body)
    if rows == "fast-triton":
        chosen = sorted((k for k in matmul if k.version in FAST_TRITON),
                        key=lambda k: FAST_TRITON.index(k.version))
    elif rows == "shape-paths":
        chosen = ([k for k in matmul if k.version == "split-k" and k.backend == "cuda"]
                  + [k for k in matmul if k.version == "split-k" and k.backend != "cuda"]
                  + [k for k in matmul if k.version == "auto"])
    else:
        raise ValueError(f"no kernel table {rows!r}: ladder, tensor-cores, fast-triton or "
                         f"shape-paths")
    body = [[f"`{k.name}`", k.summary, ", ".join(k.precisions)] for k in chosen]
    if rows == "shape-paths":
        body[:0] = [[f"`{name}`", what, precisions] for name, what, precisions in SKINNY_PATHS]
    return md_table(["kernel", "what it is", "precisions"], body)


def readme_tables() -> list[str]:
    """Every table of docs/kernels.md's matmul sections, in their order."""
    return [kernel_table(t) for t in ("ladder", "tensor-cores", "fast-triton", "shape-paths")]