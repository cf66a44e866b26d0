"""Reference matmuls: cuBLAS through torch.matmul, at every precision."""
from __future__ import annotations

from bench.registry import Kernel


def _cublas(precision: str):
    import torch

    flags = torch.backends.cuda.matmul

    def run(a, b):
        # TF32 is switched on only for the tf32 label, so that "fp32" always means IEEE
        # FFMA; fp16/bf16 accumulate in float32, as their label says, also across the
        # split-K partial sums that PyTorch otherwise lets cuBLAS add in 16 bits (the
        # *_reduced_precision_reduction flags, on by default). Restored afterwards.
        old = (flags.allow_tf32, flags.allow_fp16_reduced_precision_reduction,
               flags.allow_bf16_reduced_precision_reduction)
        flags.allow_tf32 = precision == "tf32"
        flags.allow_fp16_reduced_precision_reduction = False
        flags.allow_bf16_reduced_precision_reduction = False
        try:
            return torch.matmul(a, b)
        finally:
            (flags.allow_tf32, flags.allow_fp16_reduced_precision_reduction,
             flags.allow_bf16_reduced_precision_reduction) = old

    return run


def records() -> list[Kernel]:
    return [
        Kernel(
            name="cublas", op="matmul", backend="cublas", version="ref",
            summary="torch.matmul on CUDA (cuBLAS); TF32 only under the tf32 label",
            source="bench/catalog/matmul_reference.py",
            precisions=("fp32", "tf32", "fp16", "bf16"), loader=_cublas,
            model=None,  # a library kernel: no thread-level model, only measurements
        ),
    ]
