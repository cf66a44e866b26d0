"""The program compute-sanitizer runs over (tests/gpu/test_sanitizer.py): every CUDA and
Triton kernel of the registry, once per precision, at odd shapes (edges of every tile) and
at the first of them with every input one element past the start of its storage (the
launchers' scalar paths, Triton's unaligned specializations, TMA's staging), with a marker
line before each so an error report can be traced to its kernel (errors_by_kernel).

    compute-sanitizer --tool memcheck python -m tests.support.sanitize_target [--kernels GLOBS]
"""
from __future__ import annotations

import argparse
import re
import sys

# Odd shapes per op: tile edges, a masked tail, columns as well as rows.
SHAPES = {
    # then: tiles cut in M, N and K on the 16-byte and TMA paths (K and N multiples of 8;
    # 264x520x136 is 3 x 3 tiles of 128 x 256, for t3 two rows of clusters, the second with
    # a block half below M); 264x264x4104 splits t5's four tiles along k into runs of 17 k
    # tiles (helpers' partials through global memory, owners adding them); 264x264x4100
    # stages the TMA rungs' operands into padded buffers (K % 8 = 4, compute-bound) and
    # takes triton_auto's split-K; 3x1000x1024, 1000x5x999 and 1000x5x1024: the skinny
    # paths, M small and N small (scalar and 16-byte loads), K split
    "matmul": "127x129x31,1x65x17,136x264x40,264x520x136,264x264x4104,264x264x4100,"
              "3x1000x1024,1000x5x999,1000x5x1024",
    "vector_add": "1000,4097",
    "copy": "1000,4097",
    "relu_dropout": "1000,4097",
    # 100003: clusters of 2 (fp32); 262144: Triton's split in shared memory (Gluon, TMA)
    "softmax": "37x1000,37x1000:dim=0,5x40000,2x100003,2x262144",
    "rgb_to_grey": "3x31x17,3x9x1030",
}

# The matmul shapes of racecheck over the Triton kernels (tests/gpu/test_sanitizer.py): the
# same tile edges, 264x264x4104 replaced by 136x136x1032 and 264x264x4100 by 136x136x1028
# (16 or more k-steps: every ring of stages, at most 4 x 64 deep, laps four times or more). racecheck instruments every memory
# access of a launch: over the Triton half at the shapes above it ran 57 of its 133 launches
# in 300 s on the H100 (triton_v1_naive 72 s, triton_grouped 66 s, triton_v1.5 48 s), and
# 264x264x4104 held 93% of the first five shapes' multiply-adds. Below 2^27 multiply-adds the
# autotuners keep their small-problem tiles, so racecheck sees those; memcheck and initcheck
# still run every candidate at 264x264x4104.
RACECHECK_TRITON_MATMUL = ("127x129x31,1x65x17,136x264x40,264x520x136,136x136x1032,"
                           "136x136x1028,3x1000x1024,1000x5x999,1000x5x1024")


def misaligned(inputs) -> tuple:
    """The same inputs, each tensor copied into a view that starts one element into its
    storage: contiguous, but not 16-byte aligned, so no launcher takes its vector path."""
    import torch

    out = []
    for t in inputs:
        if isinstance(t, torch.Tensor):
            view = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)[1:].view(t.shape)
            view.copy_(t)
            t = view
        out.append(t)
    return tuple(out)


def launch_once(fn, *args, quantiles=None, **kwargs):
    """triton.testing.do_bench as the autotuners see it in this process (untimed_tuning):
    the candidate launched once and not timed, every candidate equal, so the first is kept.
    A time under a sanitizer means nothing, and do_bench's runs (5 to estimate, then its
    warm-up and repetitions, each after a 256 MB cache flush) are about 7 instrumented
    launches per candidate; every candidate still runs, once, under the tool."""
    fn()
    return [1.0] * len(quantiles) if quantiles else 1.0


def untimed_tuning() -> None:
    """The autotuned matmuls (triton_impl._common.tuning_hooks) time 6 candidates per
    precision at shapes over 2^27 multiply-adds (264x264x4104 here); with them timed,
    racecheck over the Triton kernels did not finish within 7 minutes on the H100. Equal
    untimed results must not reach triton's on-disk record of tuning results, which later
    runs would trust: it stays off in this process."""
    import os

    import triton.testing

    os.environ["TRITON_CACHE_AUTOTUNING"] = "0"
    triton.testing.do_bench = launch_once


def main(argv=None) -> int:
    import torch

    from bench import problems, registry
    from bench.device import poison_free_memory

    p = argparse.ArgumentParser()
    p.add_argument("--kernels", default="*")
    p.add_argument("--poison-outputs", action="store_true",
                   help="run each kernel twice, filling the caching allocator's free "
                        "memory with 0xFF bytes (NaN in every float type) in between, so the "
                        "second, checked output lands on written, poisoned memory (for "
                        "initcheck: see bench.device.poison_free_memory)")
    p.add_argument("--matmul-shapes", default=SHAPES["matmul"],
                   help="the matmul shapes (default: SHAPES['matmul'])")
    args = p.parse_args(argv)
    untimed_tuning()
    ran = 0
    for k in registry.select(args.kernels):
        if k.backend not in ("cuda", "triton") or k.op not in SHAPES:
            continue
        problem = problems.get(k.op)
        shapes = problem.parse_shapes(args.matmul_shapes if k.op == "matmul" else SHAPES[k.op])
        for shape, offset in [(s, False) for s in shapes] + [(shapes[0], True)]:
            if k.refusal(shape):
                continue                # a shape the kernel does not take (Kernel.refuses)
            for precision in k.precisions:
                print(f"== {k.name} {shape} {precision}{' misaligned' if offset else ''}",
                      flush=True)
                inputs = problem.inputs(shape, precision, seed=1, device="cuda")
                if offset:
                    inputs = misaligned(inputs)
                if args.poison_outputs:
                    k.runner(precision)(*inputs)   # the output's block, now free again
                    poison_free_memory()   # bench.device: initcheck does not see TMA stores
                out = k.runner(precision)(*inputs)
                torch.cuda.synchronize()
                err = problem.error(out, inputs, precision=precision, kernel=k)
                if not err <= problem.tolerance(shape, precision):
                    print(f"WRONG {k.name} {shape} {precision}: error {err}", flush=True)
                    return 1
                ran += 1
    if any(k.name == "triton_softmax_split" for k in registry.select(args.kernels)):
        forms = _split_forms()
        if forms is None:
            return 1
        ran += forms
    print(f"ran {ran} kernel launches", flush=True)
    return 0


def _split_forms() -> int | None:
    """triton_softmax_split's launches the registry's runner does not make: the two launches
    (the op takes them while torch traces) with rows of one segment and of several, the
    register kernels asked for where the shared-memory one is the default, and the
    shared-memory kernel with two buffers. How many ran; None after a wrong result."""
    import torch

    from triton_impl import softmax_split

    forms = [dict(two_launches=True), dict(two_launches=True, block=256), dict(smem=False),
             dict(smem=True, smem_tile=(8192, 2, 4))]
    for form in forms:
        for dtype in (torch.float32, torch.bfloat16):
            print(f"== triton_softmax_split 3x1024 {dtype} {form}", flush=True)
            x = torch.randn(3, 1024, device="cuda", dtype=dtype)
            y = softmax_split._softmax_split(x, **form)
            torch.cuda.synchronize()
            err = (y.double() - torch.softmax(x.double(), -1)).abs().max().item()
            if not err <= 1e-2:
                print(f"WRONG triton_softmax_split {form}: error {err}", flush=True)
                return None
    return len(forms) * 2


def errors_by_kernel(log: str) -> dict[str, int]:
    """Sanitizer error reports ('========= Invalid __global__ read', 'Race reported',
    'Uninitialized __global__ memory read', ...) counted per marker line before them."""
    counts: dict[str, int] = {}
    current = "(before the first kernel)"
    for line in log.splitlines():
        if line.startswith("== "):
            current = line[3:].split()[0]
        elif re.match(r"=+ (Invalid|Race|Uninitialized|Error|Program hit|Barrier|Malloc)", line) \
                or "Race reported" in line or "Potential" in line:
            counts[current] = counts.get(current, 0) + 1
    return counts


if __name__ == "__main__":
    sys.exit(main())
