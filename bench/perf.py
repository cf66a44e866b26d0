"""`python -m bench time`: the timed sweep, and the figures derived from each timing.

For every shape, every selected kernel at every precision it supports is timed with
bench/timing.py, and so is the library reference of its op (cuBLAS for matmul) at the
same shape and precision, in the same run, so "% of cuBLAS" compares like with like.
Each row then gets:

    tflops          useful flops (2MNK for matmul) / median time
    gbps_compulsory compulsory bytes (inputs once + output once) / time: the DRAM rate
                    the kernel would need if every byte came from DRAM exactly once
    gbps_model      the model's global loads + stores (what the threads ask for) / time:
                    the rate the memory system actually served, mostly from caches
    pct_reference   the reference kernel's time / this kernel's time, in percent
    dobench_ms      the same launch timed by triton.testing.do_bench (the cross-check,
                    kernels of 0.2-100 ms), and dobench_pct_reference its ratio to the
                    reference's do_bench time
    host_ms         the host's time of one call, enqueue only (the median of 5 calls, each
                    after a synchronize): what every call costs the CPU before the GPU
                    sees it. The median above hides it by design (the spin keeps the host
                    ahead); a loop of calls shorter than it is bound by it, and the
                    alternating rounds, launched back to back, include it
    roof_tflops     what the measured roofline allows at this kernel's compulsory
                    intensity: min(cuBLAS ceiling at this precision, copy bandwidth x
                    flops/byte); pct_roof is tflops / roof_tflops in percent

Memory-bound ops (bench/families/memory/problems.py) have no useful flops: their pct_roof is
gbps_compulsory / the copy bandwidth measured in the same run, their reference is PyTorch
eager, and their model bytes are computed at the row's precision (element size).
"""
from __future__ import annotations

import sys
import time as _time

from bench import ceilings as ceil_mod
from bench import device as dev
from bench import env as env_mod
from bench import problems, terminal
from bench.registry import REFERENCE_BACKENDS
from bench.timing import (L2Flusher, Policy, alternating_ratio, clock_note, do_bench_ms,
                          time_launches, verify_after_timing)


def reference_for(op: str, kernels) -> object | None:
    """The library kernel of this op that others are compared with (cuBLAS for matmul)."""
    for backend in REFERENCE_BACKENDS:
        for k in kernels:
            if k.op == op and k.backend == backend:
                return k
    return None


def _row(kernel, problem, shape, precision, timing=None, status="ok", note="", clock=None):
    flops = problem.useful_flops(shape)
    comp = problem.compulsory_bytes(shape, precision)
    model = problem.traffic(kernel, shape, precision)
    model_bytes = (model.global_load_bytes + model.global_store_bytes) if model else None
    row = dict(kernel=kernel.name, backend=kernel.backend, version=kernel.version,
               op=kernel.op, twin=kernel.twin or "", shape=str(shape),
               size=problem.size(shape), precision=precision, flops=flops,
               compulsory_bytes=comp, model_bytes=model_bytes)
    if kernel.chooses is not None:
        row["choice"] = kernel.choice(shape, precision)   # what a dispatching entry ran
    if timing is None:
        row.update(median_ms=None, q1_ms=None, q3_ms=None, iqr_ms=None, min_ms=None, reps=0,
                   host_ms=None, tflops=None, gbps_compulsory=None, gbps_model=None)
    else:
        s = timing.median_ms * 1e-3
        row.update(timing.as_dict())
        row.update(tflops=flops / s / 1e12 if flops else None,
                   gbps_compulsory=comp / s / 1e9,
                   gbps_model=model_bytes / s / 1e9 if model_bytes else None)
    row.update(sm_clock_mhz=clock, status=status, note=note)
    return row


def derive(rows: list[dict], ceilings: dict) -> list[dict]:
    """Adds pct_reference, roof_tflops and pct_roof to every row (in place; returns rows)."""
    ref_ms, ref_dobench = {}, {}
    for r in rows:
        if r.get("is_reference") and r.get("median_ms"):
            ref_ms[(r["op"], r["shape"], r["precision"])] = r["median_ms"]
            ref_dobench[(r["op"], r["shape"], r["precision"])] = r.get("dobench_ms")
    for r in rows:
        ref = ref_ms.get((r["op"], r["shape"], r["precision"]))
        ms = r.get("median_ms")
        r["pct_reference"] = 100 * ref / ms if ref and ms else None
        ref_db, db = ref_dobench.get((r["op"], r["shape"], r["precision"])), r.get("dobench_ms")
        r["dobench_pct_reference"] = 100 * ref_db / db if ref_db and db else None
        roof = ceil_mod.roof_tflops(ceilings, r["precision"], r["flops"], r["compulsory_bytes"])
        r["roof_tflops"] = roof
        if r.get("tflops") and roof:
            r["pct_roof"] = 100 * r["tflops"] / roof
        elif ms and not r["flops"] and ceilings.get("copy_gbps"):
            # a memory-bound op without flops: compare its bandwidth with the copy's
            r["pct_roof"] = 100 * r["gbps_compulsory"] / ceilings["copy_gbps"]
        else:
            r["pct_roof"] = None
    return rows


def quick_shapes(kernels) -> dict[str, str]:
    """A few shapes per op for a quick sweep (`report --quick`): op -> shapes text."""
    return {op: problems.get(op).quick_time_shapes for op in dict.fromkeys(k.op for k in kernels)
            if problems.known(op) and problems.get(op).quick_time_shapes}


def _shapes(problem, shapes_text):
    """The shapes to time for this problem: shapes_text is one text for every op, a dict
    op -> text (ops it does not name are not timed), or None (the op's GPU defaults).
    None if the text does not fit the op."""
    try:
        return problems.shapes_for(problem, shapes_text, problem.time_shapes["cuda"])
    except ValueError:
        return None


def plan(kernels, shapes_text, precisions, everything) -> tuple[list[tuple], list]:
    """The work list of a sweep: (problem, shape, kernel, precision, is_reference) in the
    order they are timed, plus the kernels skipped because their op has no Problem (or the
    shapes given do not fit their op: "1024x1024x1024" is no image).

    The reference kernel of each op (cuBLAS for matmul) is added at every shape, at the
    precisions the other kernels use, so that % of reference exists for every row.
    """
    chosen = list(kernels)
    for op in sorted({k.op for k in chosen}):
        ref = reference_for(op, everything)
        if ref is not None and ref not in chosen:
            chosen.append(ref)
    work, skipped = [], []
    for op in dict.fromkeys(k.op for k in chosen):
        if not problems.known(op):
            skipped.extend(k for k in chosen if k.op == op)
            continue
        problem = problems.get(op)
        shapes = _shapes(problem, shapes_text)
        if shapes is None:
            skipped.extend(k for k in chosen if k.op == op)
            continue
        ref = reference_for(op, everything)
        used = {p for k in chosen if k.op == op and k is not ref for p in k.precisions
                if not precisions or p in precisions}
        for k in [k for k in chosen if k.op == op and not dev.can_run(k, "cuda")[0]]:
            skipped.append(k)                     # e.g. a Hopper-only kernel on an A100
        for shape in shapes:
            for k in chosen:
                if k.op != op or k in skipped:
                    continue
                for p in k.precisions:
                    if precisions and p not in precisions:
                        continue
                    if k is ref and used and p not in used:
                        continue  # cuBLAS only at precisions some kernel is compared at
                    work.append((problem, shape, k, p, k is ref))
    return work, skipped


CHECKPOINT_S = 30.0   # a long sweep hands its rows to `checkpoint` at least this often


def run(kernels, shapes_text: str | None = None, precisions: list[str] | None = None,
        policy: Policy | None = None, measure_ceilings: bool = True,
        all_kernels=None, ceilings: dict | None = None,
        checkpoint=None, suite: str = "") -> tuple[list[dict], dict, dict]:
    """Times kernels x shapes x precisions on the GPU. Returns (rows, env, ceilings).

    shapes_text: comma-separated shapes for every op, a dict op -> shapes (see
    bench.problems.parse_shapes_spec), or None (each op's GPU defaults).
    all_kernels: where to look for the reference kernels (default: the registry).
    ceilings: when measure_ceilings is False, the ceilings to derive the rows with (those
    of an earlier run, for `bench time --append --no-ceilings`).
    checkpoint(rows, env, ceilings, done, planned): called with the rows so far (derived)
    every CHECKPOINT_S seconds, so that a sweep cut short (a time limit, a lost machine)
    keeps what it measured; the caller marks such a set incomplete.
    suite: the name of the shape suite the shapes are (--suite), recorded in every row, so
    that the ladder's sections and figures leave the suite's rows to its own section.
    """
    import torch

    from bench import registry

    device = dev.setup()
    if device != "cuda":
        raise RuntimeError("bench time needs a CUDA GPU: Triton's interpreter runs kernels "
                           "one program at a time in Python, so its timings mean nothing")
    policy = policy or Policy()
    env = env_mod.environment(device)
    flush = L2Flusher(dev.l2_cache_bytes())

    everything = all_kernels if all_kernels is not None else registry.kernels()
    work, skipped = plan(kernels, shapes_text, precisions, everything)

    ceilings = {} if measure_ceilings or ceilings is None else dict(ceilings)
    t0 = _time.monotonic()
    if measure_ceilings:
        # the copy bandwidth always; each family's own limits where its ops are timed
        print("measuring ceilings ...", file=sys.stderr, flush=True)
        ceilings = ceil_mod.measure(flush, env, {problem.name for problem, *_rest in work},
                                    policy=policy)
    rows = []
    tag = {"suite": suite} if suite else {}
    saved = _time.monotonic()
    bar = terminal.Progress(len(work), "time", unit="timings")
    for problem, shape, k, p, is_ref in work:
        why = k.refusal(shape)
        if why:                       # a shape the kernel does not take: said, not timed
            rows.append(dict(_row(k, problem, shape, p, status="skip", note=why),
                             is_reference=is_ref, **tag))
            bar.advance()
            continue
        bar.start(f"{k.name} {shape} {p}")
        try:
            fn = k.runner(p)
            inputs = problem.inputs(shape, p, seed=0, device="cuda")
            fn(*inputs)  # setup: build/JIT/autotune happen here, never in the timed loop
            torch.cuda.synchronize()
            last = {}

            def launch():
                last["out"] = fn(*inputs)

            clock_before = env_mod.sm_clock_mhz()
            t = time_launches(launch, flush, policy)
            clock_after = env_mod.sm_clock_mhz()
            with problem.judging():   # the two judgements share one reference
                wrong = verify_after_timing(last.pop("out"), lambda: _poisoned_run(
                    fn, inputs, problem, shape, p, k), _judge(problem, shape, p, inputs, k))
            note = "; ".join(n for n in (wrong, clock_note(clock_before, clock_after)) if n)
            row = _row(k, problem, shape, p, t, status="FAIL" if wrong else "ok", note=note,
                       clock=clock_after)
            row["sm_clock_mhz_before"] = clock_before
            row["dobench_ms"] = do_bench_ms(launch) if policy.crosschecks(t.median_ms) else None
            ref = reference_for(problem.name, everything) if policy.alternate else None
            if (policy.alternates(t.median_ms) and not is_ref and ref is not None
                    and p in ref.precisions and not wrong):
                ref_fn = ref.runner(p)
                ref_fn(*inputs)   # its setup, outside the rounds
                ratio, pairs = alternating_ratio(launch, lambda: ref_fn(*inputs),
                                                 policy.alternate)
                row["alternating_pct_reference"] = 100 * ratio
                row["alternating_rounds_ms"] = " ".join(f"{k:.4f}/{r:.4f}" for k, r in pairs)
            text = f"{k.name} {shape} {p}: {t.median_ms:.4f} ms " \
                   f"(IQR {t.iqr_ms:.4f}, {t.reps} reps)" + (f"; {note}" if note else "")
        except Exception as exc:  # one failing kernel must not lose the whole sweep
            first = (str(exc).splitlines() or [""])[0][:160]
            row = _row(k, problem, shape, p, status="ERROR", note=f"{type(exc).__name__}: {first}")
            text = f"{k.name} {shape} {p}: ERROR {first}"
        row["is_reference"] = is_ref
        row.update(tag)
        rows.append(row)
        bar.advance()
        bar.log(text)
        inputs = fn = None  # free the inputs before the next shape's
        if checkpoint is not None and _time.monotonic() - saved >= CHECKPOINT_S:
            partial = [dict(r) for r in rows]
            derive([r for r in partial if r.get("status") != "skip"], ceilings)
            checkpoint(partial, env, ceilings, len(partial), len(work))
            saved = _time.monotonic()
    bar.close()
    for k in skipped:
        runs, why_not = dev.can_run(k, "cuda")
        why = (f"no Problem for op {k.op!r}" if not problems.known(k.op)
               else why_not if not runs
               else f"no shapes given for op {k.op!r}, or they do not fit it")
        rows.append(dict(kernel=k.name, backend=k.backend, version=k.version, op=k.op,
                         status="skip", note=why))
    derive([r for r in rows if r.get("status") != "skip"], ceilings)
    env_mod.finish(env)
    env["sweep_seconds"] = round(_time.monotonic() - t0, 1)
    return rows, env, ceilings


def _poisoned_run(fn, inputs, problem, shape, precision, kernel):
    """One more launch, its output's memory filled with NaN first (check.poisoned_launch);
    an output that did not land there is refused (a stale right answer could hide in it)."""
    from bench import check

    out, landed = check.poisoned_launch(fn, inputs, problem.output_nbytes(shape, precision),
                                        "cuda")
    if not landed and kernel.backend not in REFERENCE_BACKENDS:
        raise RuntimeError("the recheck's output was not in the memory poisoned before it")
    return out


def _judge(problem, shape, precision, inputs, kernel):
    """out -> '' if it passes the problem's check (the one `bench check` makes), else why.
    Eager dropout draws a fresh mask per call (no seed): only the rate is judged for it,
    which is what its Problem checks too."""
    tol = problem.tolerance(shape, precision)

    def judge(out) -> str:
        err = problem.error(out, inputs, precision=precision, kernel=kernel)
        return "" if err <= tol else f"error {err:.3g} > bound {tol:.3g}"

    return judge
