"""Report sections of the memory-bound ops, from result files.

    bandwidth  per op, every kernel x shape: achieved GB/s (compulsory bytes / median time),
               % of the copy bandwidth measured in the same run, and the speed-up over
               PyTorch eager at the same shape and precision
    targets    the family's targets, each with MET / MISSED and the numbers behind it:
               - add, copy, ReLU + dropout at the >= 256 MiB shapes: >= 90% of the copy
                 bandwidth, in both languages;
               - softmax at 4096 x 32768 float32: >= 80% of it and faster than torch.softmax;
               - at the shapes the documents each op was taken from benchmark it at: every
                 kernel at least as fast as the PyTorch eager version it replaces.
    counters   per profiled kernel: DRAM bytes (ncu) next to the compulsory and model bytes:
               where a kernel misses, this says whether it moved more bytes than it must
               (extra passes reaching DRAM) or moved the right bytes too slowly.
"""
from __future__ import annotations

import math

from bench import text as fmt
from bench.families.memory.problems import is_memory_op, problem
from bench.results import num


def _memory_rows(rows):
    return [r for r in rows if is_memory_op(r.get("op", ""))]


def _ok(rows):
    return [r for r in rows if r.get("status") == "ok" and r.get("median_ms")]


def _eager_ms(rows, column: str = "median_ms") -> dict:
    """(op, shape, precision) -> a column (the median ms unless told) of PyTorch eager's
    row, the op's reference."""
    return {(r["op"], r["shape"], r["precision"]): num(r.get(column)) for r in rows
            if r.get("backend") == "torch" and r.get("version") == "eager"}


def within_noise(ms: float, iqr_ms: float, ref_ms: float, ref_iqr_ms: float) -> bool:
    """A kernel slower than its reference by less than the larger of the two interquartile
    ranges: the two medians are not told apart by this run (a 5 us launch jitters by ~0.6 us)."""
    if any(math.isnan(v) for v in (ms, iqr_ms, ref_ms, ref_iqr_ms)):
        return False
    return ms - ref_ms < max(iqr_ms, ref_iqr_ms)


def _shapes_in_order(rows) -> list[str]:
    return sorted(dict.fromkeys(r["shape"] for r in rows),
                  key=lambda s: min(num(r["compulsory_bytes"]) for r in rows if r["shape"] == s))


def section_time(time_payload: dict) -> str:
    rows = _ok(_memory_rows(time_payload["rows"]))
    if not rows:
        return ""
    copy = ((time_payload.get("meta") or {}).get("ceilings") or {}).get("copy_gbps")
    eager = _eager_ms(rows)
    parts = ["## Memory-bound ops: bandwidth",
             "Each cell: **DRAM GB/s, minimum** = compulsory bytes (inputs read once, output "
             "written once) / median launch time with L2 flushed: the rate at which HBM "
             "moves the bytes no kernel can avoid (ncu puts the kernels' DRAM bytes within a "
             "few % of the compulsory ones: the DRAM traffic section below). In brackets: % "
             f"of the copy bandwidth measured in this run ({fmt.f(copy, 0)} GB/s, DRAM read + "
             "write) and the speed-up over PyTorch eager at the same shape and precision "
             "(> 1: faster). What the threads ask for, every extra pass counted (issued by "
             "threads), is the gbps_model column of time.csv."]
    flagged = False
    for op in dict.fromkeys(r["op"] for r in rows):
        at = [r for r in rows if r["op"] == op]
        shapes = _shapes_in_order(at)
        cells = {(r["kernel"], r["precision"], r["shape"]): r for r in at}
        table = []
        for kernel, precision in dict.fromkeys((r["kernel"], r["precision"]) for r in at):
            line = [kernel, precision]
            for s in shapes:
                r = cells.get((kernel, precision, s))
                if r is None:
                    line.append("")
                    continue
                ref = eager.get((op, s, precision))
                speed = f", {ref / num(r['median_ms']):.2f}x" if ref and r.get("version") != "eager" else ""
                flagged |= fmt.above(r["gbps_compulsory"], copy)
                line.append(f"{fmt.gbps_flagged(r['gbps_compulsory'], copy)} "
                            f"({fmt.f(r.get('pct_roof'), 0)}%{speed})")
            table.append(line)
        parts.append(f"### {op}\n\n" + fmt.md_table(["kernel", "precision"] + shapes, table))
    if flagged:
        parts.append(f"{fmt.ABOVE_COPY} Above the copy bandwidth measured in this run: the copy "
                     "(torch's, 1 GiB read and written, median of its timings) is the ceiling "
                     "this report measures, not the memory's peak; a kernel whose mix of reads "
                     "and writes differs from a copy's, or whose median differs from the "
                     "copy's by their timing noise, can pass it by a few percent.")
    return "\n\n".join(parts)


def _input_bytes(op: str, shape: str, precision: str) -> float:
    p = problem(op)
    return p.input_bytes(p.parse_shape(shape), precision)


def evaluate_targets(time_payload: dict) -> list[dict]:
    """One dict per (target, kernel, shape, precision): what was needed, what was measured."""
    rows = _ok(_memory_rows(time_payload["rows"]))
    eager = _eager_ms(rows)
    eager_iqr = _eager_ms(rows, "iqr_ms")
    out = []
    mine = [r for r in rows if r.get("backend") in ("cuda", "triton")]
    for r in mine:
        p = problem(r["op"])
        shape, prec = r["shape"], r["precision"]
        pct = num(r.get("pct_roof"))
        ref = eager.get((r["op"], shape, prec))
        speed = ref / num(r["median_ms"]) if ref else math.nan
        targets = [s for s in p.target_shapes.split(",") if s]
        big = (shape in targets and prec == "fp32" if r["op"] == "softmax"
               else _input_bytes(r["op"], shape, prec) >= 256 * 2**20)   # 256 MiB or more
        if big and targets:
            need = 100 * p.bandwidth_target
            ok = pct >= need
            what = f">= {need:.0f}% of copy"
            if r["op"] == "softmax":
                ok = ok and speed > 1.0
                what += " and faster than torch.softmax"
            out.append(dict(target="bandwidth", op=r["op"], kernel=r["kernel"], shape=shape,
                            precision=prec, need=what, pct_copy=pct, vs_eager=speed, met=ok))
        if shape in [s for s in p.source_shapes.split(",") if s]:
            key = (r["op"], shape, prec)
            noise = speed < 1.0 and within_noise(num(r["median_ms"]), num(r.get("iqr_ms")),
                                                  eager.get(key, math.nan),
                                                  eager_iqr.get(key, math.nan))
            out.append(dict(target="source shape", op=r["op"], kernel=r["kernel"], shape=shape,
                            precision=prec, need=">= PyTorch eager (speed-up >= 1)",
                            pct_copy=pct, vs_eager=speed, met=speed >= 1.0, noise=noise))
    return out


def section_targets(time_payload: dict) -> str:
    results = evaluate_targets(time_payload)
    if not results:
        return ""
    table = [[t["target"], t["op"], t["kernel"], t["shape"], t["precision"], t["need"],
              fmt.f(t["pct_copy"], 1, True), "-" if math.isnan(t["vs_eager"]) else f"{t['vs_eager']:.2f}x",
              "MET" if t["met"] else "**MISSED** (within the IQR)" if t.get("noise")
              else "**MISSED**"] for t in results]
    met = sum(t["met"] for t in results)
    misses = [t for t in results if not t["met"]]
    noisy = sum(bool(t.get("noise")) for t in misses)
    text = (f"## Memory-bound ops: targets\n\n{met} of {len(results)} met. Bandwidth targets at "
            "the >= 256 MiB shapes (softmax: 4096 x 32768 float32); source-shape targets at the "
            "shapes the documents each op was taken from benchmark it at, against PyTorch "
            "eager timed in the same run."
            "\n\n" + fmt.md_table(["target", "op", "kernel", "shape", "precision", "needed",
                                    "% of copy", "vs eager", "status"], table))
    if misses:
        text += (f"\n\n{noisy} of the {len(misses)} misses are slower than PyTorch eager by "
                 "less than the larger interquartile range of the two timings: this run "
                 "cannot tell those medians apart. Every miss is explained with the counters "
                 "in docs/performance/memory_bound.md (\"Small shapes\").")
    return text


def section_profile(profile_payload: dict) -> str:
    rows = [r for r in _memory_rows(profile_payload["rows"]) if r.get("status") == "ok"]
    if not rows:
        return ""
    table = []
    for r in rows:
        dram = num(r.get("dram_read_bytes")) + num(r.get("dram_write_bytes"))
        comp = num(r.get("compulsory_bytes"))
        model = num(r.get("model_global_load_bytes"))
        table.append([r["kernel"], r["shape"], r["precision"], fmt.binary_bytes(comp),
                      fmt.binary_bytes(model), fmt.binary_bytes(r.get("issued_bytes")),
                      fmt.f(r.get("ratio_issued"), 4), fmt.binary_bytes(r.get("l2_bytes")),
                      fmt.binary_bytes(r.get("dram_read_bytes")),
                      fmt.binary_bytes(r.get("dram_write_bytes")),
                      fmt.f(dram / comp if comp else None, 3),
                      fmt.f(r.get("ncu_time_ms"), 4), (r.get("ncu_kernels") or "")[:60]])
    ratios = [num(r.get("ratio_issued")) for r in rows]
    vectors = any(not math.isnan(x) and x < 0.9 for x in ratios)
    return ("## Memory-bound ops: DRAM traffic versus the model\n\nOne launch per row (ncu, "
            "caches flushed before it), from what the threads ask for down to what HBM "
            "moves. **compulsory** = inputs once + output once; **model loads** = the bytes "
            "the threads' loads ask for, closed form (extra passes included); **issued** = "
            "bytes of the load instructions the threads executed (counted by the hardware); "
            "**L2** = bytes L1 fetched from L2; **DRAM** = what HBM delivered and absorbed. "
            "DRAM / compulsory near 1.00 means no extra pass reached DRAM (a second read "
            "served by L2 costs no DRAM bandwidth); above it, the excess is traffic the "
            "kernel could avoid.\n\n"
            + fmt.md_table(["kernel", "shape", "prec", "compulsory", "model loads",
                            "issued (threads)", "issued/model (instructions)", "L2 -> L1",
                            "DRAM read", "DRAM write", "DRAM / compulsory", "ncu ms",
                            "CUDA kernels"], table)
            + ("\n\n**Why issued/model reads 0.25.** The model counts elements; the counter "
               "counts load instructions (warp instructions x 32 lanes where this ncu has no "
               "thread-level counter), one per lane per instruction. These kernels load with "
               "16-byte vectors: one instruction moves 4 fp32, 8 fp16 or bf16, 16 uint8 per "
               "lane, so the ratio is 0.25, 0.125 or 0.0625 while the bytes agree (issued = "
               "model loads)." if vectors else ""))


def summary_lines(s: dict) -> list[str]:
    """The memory-bound ops' headline numbers: the targets met, and at each op's target
    shape the best CUDA and Triton kernel's share of the copy bandwidth."""
    if "time" not in s:
        return []
    results = evaluate_targets(s["time"])
    out = []
    if results:
        met = sum(t["met"] for t in results)
        misses = [t for t in results if not t["met"]]
        noisy = sum(bool(t.get("noise")) for t in misses)
        out.append(f"- **memory-bound ops, targets**: {met} of {len(results)} met"
                   + (f"; {noisy} of the {len(misses)} misses are within the timing noise"
                      if misses else "") + ".")
    best: dict = {}
    for t in results:
        if t["target"] == "bandwidth" and t["kernel"].split("_")[0] in ("cuda", "triton"):
            key = (t["op"], t["kernel"].split("_")[0])
            best[key] = max(best.get(key, 0.0), t["pct_copy"])
    if best:
        ops = list(dict.fromkeys(op for op, _lang in best))
        cells = [f"{op} {fmt.f(best.get((op, 'cuda')), 0)} / {fmt.f(best.get((op, 'triton')), 0)}"
                 for op in ops]
        out.append("- **memory-bound ops, DRAM GB/s at the target shapes** (compulsory bytes "
                   "/ time as % of the copy bandwidth, best CUDA / best Triton kernel): "
                   + ", ".join(cells) + ".")
    return out


def readme_table() -> str:
    """The table of the memory-bound kernels in docs/kernels.md (every record, references
    and the deliberately wrong copies included)."""
    from bench import registry

    head = ["op", "kernel", "backend", "version", "precisions", "what it is", "traffic"]
    rows = [[k.op, f"`{k.name}`", k.backend, k.version, ", ".join(k.precisions), k.summary,
             k.formula or "-"] for k in registry.kernels() if is_memory_op(k.op)]
    return fmt.md_table(head, rows)
