"""The program Nsight Compute profiles: one kernel, one shape, one launch measured.

    python -m bench._ncu_target --kernel cuda_v3_smem_tiling --shape 1024x1024x1024 --precision fp32

It makes the inputs, calls the kernel a few times first (the extension loads, Triton
compiles, an autotuner tries its configurations: dozens of launches that must not be
counted), waits for the GPU, and only then launches the kernel once more inside the NVTX
range "cvt_measure". bench/profile.py runs ncu with `--nvtx --nvtx-include cvt_measure/`,
so ncu collects counters for the launches inside that range and nothing else.
"""
from __future__ import annotations

import argparse
import sys

RANGE = "cvt_measure"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench._ncu_target", description=__doc__)
    p.add_argument("--kernel", required=True)
    p.add_argument("--shape", required=True)
    p.add_argument("--precision", default="fp32")
    p.add_argument("--warmup", type=int, default=2)
    args = p.parse_args(argv)

    import torch

    from bench import problems, registry

    if not torch.cuda.is_available():
        print("bench._ncu_target: needs a CUDA GPU", file=sys.stderr)
        return 2
    kernel = registry.get(args.kernel)
    problem = problems.get(kernel.op)
    shape = problem.parse_shape(args.shape)
    fn = kernel.runner(args.precision)
    inputs = problem.inputs(shape, args.precision, seed=0, device="cuda")
    for _ in range(max(1, args.warmup)):
        fn(*inputs)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(RANGE)
    fn(*inputs)
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
