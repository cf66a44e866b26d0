"""The program Nsight Compute profiles: launches measured inside the NVTX range "cvt_measure".

    python -m bench._ncu_target --kernel cuda_v3_smem_tiling --shape 1024x1024x1024 --precision fp32
    python -m bench._ncu_target --batch work.json     # [[kernel, shape, precision], ...]

For each item it makes the inputs, calls the kernel a few times first (the extension loads,
Triton compiles, an autotuner tries its configurations: dozens of launches that must not be
counted), waits for the GPU, and only then launches the kernel once more inside the NVTX
range "cvt_measure". bench/profile.py runs ncu with `--nvtx --nvtx-include cvt_measure/`,
so ncu collects counters for the launches inside that range and nothing else.

In a batch, every measured launch is preceded, inside the range, by one MARKER launch
(torch.cuda._sleep: ATen's spin_kernel): the marker kernels cut ncu's list of profiled
kernels into one group per item, even when an item launches several kernels or none. One
process for the whole batch pays Python, torch and the CUDA context once, not per kernel.
A line "CVT_ITEM i ok" or "CVT_ITEM i error: ..." per item goes to stdout.
"""
from __future__ import annotations

import argparse
import json
import sys

RANGE = "cvt_measure"
MARKER = "spin_kernel"  # the name ncu gives torch.cuda._sleep's kernel


def measure(kernel_name: str, shape_text: str, precision: str, warmup: int, marker: bool) -> None:
    import torch

    from bench import problems, registry

    fn = inputs = None
    error = None
    try:
        kernel = registry.get(kernel_name)
        problem = problems.get(kernel.op)
        fn = kernel.runner(precision)
        inputs = problem.inputs(problem.parse_shape(shape_text), precision, seed=0, device="cuda")
        for _ in range(max(1, warmup)):
            fn(*inputs)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - reported per item, the batch goes on
        error = e
    torch.cuda.nvtx.range_push(RANGE)
    try:
        if marker:
            torch.cuda._sleep(1)
        if error is None:
            fn(*inputs)
    except Exception as e:  # noqa: BLE001
        error = e
    finally:
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    if error is not None:
        raise RuntimeError(f"{type(error).__name__}: {error}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench._ncu_target", description=__doc__)
    p.add_argument("--kernel")
    p.add_argument("--shape")
    p.add_argument("--precision", default="fp32")
    p.add_argument("--batch", help="JSON file: a list of [kernel, shape, precision]")
    p.add_argument("--warmup", type=int, default=2)
    args = p.parse_args(argv)

    import torch

    if not torch.cuda.is_available():
        print("bench._ncu_target: needs a CUDA GPU", file=sys.stderr)
        return 2
    if args.batch is None:
        if not args.kernel or not args.shape:
            p.error("give --kernel and --shape, or --batch")
        measure(args.kernel, args.shape, args.precision, args.warmup, marker=False)
        return 0
    with open(args.batch) as f:
        items = json.load(f)
    for i, (kernel, shape, precision) in enumerate(items):
        try:
            measure(kernel, shape, precision, args.warmup, marker=True)
            print(f"CVT_ITEM {i} ok", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"CVT_ITEM {i} error: {str(e)[:300]}", flush=True)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
