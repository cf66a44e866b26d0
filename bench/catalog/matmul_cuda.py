"""The CUDA matmul ladder (cuda/matmul_*.cu), exposed as torch ops by bindings/."""
from __future__ import annotations

from bench.families.matmul import models
from bench.registry import Kernel
from bindings import config

def _params(**names: str):
    """Maps model parameter names (V, L, S, ...) to header names (V3_L, ...), read lazily
    from cuda/matmul_config.h (bindings/config.py)."""
    return lambda precision=None: {k: config.params()[v] for k, v in names.items()}


def _op(op_name: str):
    def load(precision: str):
        import bindings

        return getattr(bindings.ops(), op_name)

    return load


def _record(name, version, op_name, summary, model, params, formula, twin=None,
            twin_note="") -> Kernel:
    return Kernel(
        name=name, op="matmul", backend="cuda", version=version, summary=summary,
        source=f"cuda/{op_name}.cu", precisions=("fp32",), loader=_op(op_name),
        params=params, model=model, twin=twin, formula=formula, twin_note=twin_note,
    )


def records() -> list[Kernel]:
    return [
        _record("cuda_v1_naive", "v1", "matmul_v1_naive",
                "one thread per C element; threadIdx.x indexes the row (uncoalesced)",
                models.matmul_v1, _params(BLOCK="V1_BLOCK"), "2N³", twin="triton_v1_naive"),
        _record("cuda_v1_coalesced", "v1c", "matmul_v1_coalesced",
                "v1 with threadIdx.x indexing the column: a warp reads 128 contiguous bytes of B",
                models.matmul_v1, _params(BLOCK="V1_BLOCK"), "2N³ (same count, coalesced)",
                twin_note="Triton chooses the thread-to-element layout itself, so the "
                "uncoalesced mapping cannot be written (see triton_impl/matmul_v1_naive.py)"),
        _record("cuda_v1.5_thread_tiling", "v1.5", "matmul_v1_5_thread_tiling",
                "each thread computes a VxV block row by row, reusing each A value V times",
                models.matmul_v1_5, _params(V="V15_V", T="V15_T"), "N³/V + N³",
                twin="triton_v1.5_thread_tiling"),
        _record("cuda_v2_register_tiling", "v2", "matmul_v2_register_tiling",
                "VxV accumulators in registers; per k an outer product of V values of A and B",
                models.matmul_v2, _params(V="V2_V", T="V2_T"), "2N³/V", twin="triton_v2_register_tiling"),
        _record("cuda_v3_smem_tiling", "v3", "matmul_v3_smem_tiling",
                "LxL block tile staged through SxL shared-memory tiles (cooperative fetch), "
                "VxV per thread",
                models.matmul_v3, _params(L="V3_L", S="V3_S", V="V3_V"),
                "global 2N³/L, shared 2N³/V", twin="triton_v3_smem_tiling"),
    ]
