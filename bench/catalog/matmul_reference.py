"""Reference matmuls: cuBLAS through torch.matmul, at every precision."""
from __future__ import annotations

from bench.registry import Kernel


def _cublas(precision: str):
    import torch

    def run(a, b):
        # TF32 is switched on only for the tf32 label, and restored afterwards, so that
        # "fp32" always means IEEE FFMA. fp16/bf16 accumulate in fp32 (cuBLAS default).
        old = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
        try:
            return torch.matmul(a, b)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = old

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
