"""The matmul paths for shapes that are not one big GEMM, and the two entries that pick a
path per shape (docs/performance/shapes.md):

    triton_split_k   triton_impl/matmul_split_k.py: the k loop shared out over programs
                     (skinny and few-tile shapes; any shape)
    cuda_split_k     cuda/matmul_split_k.cu: its CUDA twin at fp16 and bf16 (Hopper: t2's
                     TMA and wgmma, the k loop shared out over grid y; any shape)
    cuda_split_k_tf32  cuda/matmul_split_k_tf32.cu: the same at tf32, on t4's C^T = B^T A^T
    cuda_auto        bindings/auto.py: per shape and precision, one of the CUDA kernels
    triton_auto      triton_impl/matmul_auto.py: the same for the Triton matmuls

cuda_skinny (cuda/matmul_skinny.cu: M or N <= 16) and its Triton twin triton_skinny
(triton_impl/matmul_skinny.py) take only skinny shapes, so they are not in the registry, whose
kernels every check and test runs at every shape: the auto entries run them, and
`skinny_record()` and `triton_skinny_record()` give the harness records to check and time
them by (tests/gpu/test_shape_paths.py, docs/performance/shapes_probe.py).
"""
from __future__ import annotations

from bench.catalog.matmul_cuda import (_SM90A, _T1_FALLBACK, _V7_FALLBACK, _WARPTILED, _op,
                                       _params, _warptiled)
from bench.families.matmul import models, models_triton
from bench.registry import Kernel

ALL_PRECISIONS = ("fp32", "tf32", "fp16", "bf16")


def _skinny_loader(precision: str):
    import bindings

    return bindings.ops().matmul_skinny      # float32 at fp32 and tf32 (FFMA either way)


def _beyond(shape, rows: int, there: str) -> str:
    """Why a skinny path refuses `shape` (neither M nor N at most `rows`), or ""."""
    if min(shape.M, shape.N) <= rows:
        return ""
    return f"the skinny path takes M or N <= {rows}, got M = {shape.M}, N = {shape.N} ({there})"


def _not_skinny(shape) -> str:
    from bindings import config

    return _beyond(shape, config.params()["SKINNY_MAX_R"], "cuda_auto runs the ladder there")


def _not_skinny_triton(shape) -> str:
    from triton_impl import tiles

    return _beyond(shape, tiles.SKINNY_MAX_R, "triton_auto runs split_k or tl.dot there")


def _triton_skinny_loader(precision: str):
    from triton_impl import matmul_skinny

    op = matmul_skinny.op()
    return lambda a, b: op(a, b, precision)


def _split_k_loader(precision: str):
    from triton_impl import matmul_split_k

    op = matmul_split_k.op()
    return lambda a, b: op(a, b, precision)


def _cuda_auto_loader(precision: str):
    import bindings
    from bindings import auto

    bindings.ops()                           # built and loaded before the first call
    return lambda a, b: auto.matmul(a, b, precision)


def _triton_auto_loader(precision: str):
    from triton_impl import matmul_auto

    return lambda a, b: matmul_auto.matmul(a, b, precision)


def _cuda_choice(shape, precision: str) -> str:
    from bindings import auto

    return auto.kernel_name(auto.choose(shape.M, shape.N, shape.K, precision,
                                        *auto.current_facts()))


def _triton_choice(shape, precision: str) -> str:
    from triton_impl import matmul_auto

    return matmul_auto.kernel_name(matmul_auto.choose(shape.M, shape.N, shape.K, precision,
                                                      *matmul_auto.current_facts()))


def skinny_record() -> Kernel:
    """cuda_skinny as a record (not registered: it refuses every shape with M and N > 16)."""
    return Kernel(
            name="cuda_skinny", op="matmul", backend="cuda", version="skinny",
            summary="M or N <= 16: warps stream the big operand once, the small one from "
                    "shared memory; k split over the grid",
            source="cuda/matmul_skinny.cu", precisions=ALL_PRECISIONS, loader=_skinny_loader,
            refuses=_not_skinny,
            twin_note="triton_skinny (triton_skinny_record) streams the big operand through "
                      "FMAs as it does")


def triton_skinny_record() -> Kernel:
    """triton_skinny as a record (not registered: it refuses every shape with M and N > 16)."""
    return Kernel(
            name="triton_skinny", op="matmul", backend="triton", version="skinny",
            summary="M or N <= 16: programs stream the big operand once through FMAs, no "
                    "tl.dot; k split over the grid",
            source="triton_impl/matmul_skinny.py", precisions=ALL_PRECISIONS,
            loader=_triton_skinny_loader, runs_on_cpu=True, refuses=_not_skinny_triton,
            twin_note="cuda_skinny (skinny_record) is its CUDA twin")


def records() -> list[Kernel]:
    return [
        Kernel(
            name="triton_split_k", op="matmul", backend="triton", version="split-k",
            summary="the k loop shared out over programs (16-row tiles where M or N <= 16), "
                    "partial tiles summed in order",
            source="triton_impl/matmul_split_k.py", precisions=ALL_PRECISIONS,
            loader=_split_k_loader, runs_on_cpu=True, model=models_triton.matmul_split_k,
            formula="N³/BLOCK_N + N³/BLOCK_M (the tile of the shape's case)",
            twin="cuda_split_k"),
        Kernel(
            name="cuda_split_k", op="matmul", backend="cuda", version="split-k",
            summary="t2's TMA and wgmma on 128 x 128 tiles (64 x 128 where M <= 64), the k loop "
                    "shared out over grid y, summed in order",
            source="cuda/matmul_split_k.cu", precisions=("fp16", "bf16"),
            loader=_op("matmul_split_k"),
            params=_params(BM="SPLIT_K_BM", SHORT_BM="SPLIT_K_SHORT_BM", BN="SPLIT_K_BN",
                           BK="SPLIT_K_BK",
                           STAGES="SPLIT_K_STAGES", MIN_RUN="SPLIT_K_MIN_RUN", **_T1_FALLBACK),
            model=models.matmul_split_k, formula="global N³/BN + N³/BM (TMA), any split",
            twin="triton_split_k", min_capability=(9, 0), max_capability=(9, 0),
            needs=_SM90A),
        Kernel(
            name="cuda_split_k_tf32", op="matmul", backend="cuda", version="split-k",
            summary="cuda_split_k at tf32: t4's 256 x 128 tiles and C^T = B^T A^T, the k loop "
                    "shared out over grid y",
            source="cuda/matmul_split_k_tf32.cu", precisions=("tf32",),
            loader=_op("matmul_split_k_tf32"),
            params=_params(BM="SPLIT_K_TF32_BM", BN="SPLIT_K_TF32_BN", BK="SPLIT_K_TF32_BK",
                           STAGES="SPLIT_K_TF32_STAGES", MIN_RUN="SPLIT_K_TF32_MIN_RUN",
                           **_V7_FALLBACK),
            model=models.matmul_split_k_tf32, formula="global N³/BN + N³/BM (TMA), any split",
            twin_note="triton_split_k at tf32 runs the same algorithm (its twin entry is "
                      "cuda_split_k, at 16 bits)", min_capability=(9, 0), max_capability=(9, 0),
            needs=_SM90A),
        Kernel(
            name="cuda_split_k_fp32", op="matmul", backend="cuda", version="split-k",
            summary="v7's tile and k loop shared out over grid z where the tiles leave SMs "
                    "idle, partials summed in order",
            source="cuda/matmul_split_k_fp32.cu", precisions=("fp32",),
            loader=_op("matmul_split_k_fp32"),
            params=_warptiled("SPLIT_K_FP32", "STAGES", "MIN_RUN", "NARROW_BN",
                              "NARROW_BLOCKS"),
            model=models.matmul_split_k_fp32, formula=_WARPTILED,
            twin_note="triton_split_k at fp32 runs the same algorithm (its twin entry is "
                      "cuda_split_k, at 16 bits)", min_capability=(8, 0)),
        Kernel(
            name="cuda_auto", op="matmul", backend="cuda", version="auto",
            summary="picks per shape and precision: cuda_skinny (M or N <= 16), split_k, "
                    "split_k_tf32, v8, t4 or t5",
            source="bindings/auto.py", precisions=ALL_PRECISIONS, loader=_cuda_auto_loader,
            chooses=_cuda_choice, twin="triton_auto"),
        Kernel(
            name="triton_auto", op="matmul", backend="triton", version="auto",
            summary="picks per shape: triton_skinny (fp32: N <= 16, M = 1), split_k (skinny, "
                    "few tiles), else autotuned or persistent",
            source="triton_impl/matmul_auto.py", precisions=ALL_PRECISIONS,
            loader=_triton_auto_loader, runs_on_cpu=True, chooses=_triton_choice,
            twin="cuda_auto"),
    ]
