"""The CUDA matmul ladder (cuda/matmul_*.cu), exposed as torch ops by bindings/."""
from __future__ import annotations

from bench.families.matmul import models
from bench.registry import Kernel
from bindings import config

def _params(**names: str):
    """Maps model parameter names (V, L, S, ...) to header names (V3_L, ...), read lazily
    from cuda/matmul_config.h (bindings/config.py)."""
    return lambda precision=None: {k: config.params()[v] for k, v in names.items()}


def _warptiled(rung: str, *extra: str):
    """The parameters of a warptiled rung (v5 on): block, warp and thread tiles, then the
    rung's own, each read from the header as <rung>_<NAME> (V6_BM, ...)."""
    names = ("BM", "BN", "BK", "WM", "WN", "TM", "TN") + extra
    return _params(**{n: f"{rung}_{n}" for n in names})


_WARPTILED = "global N³/BN + N³/BM, shared N³/TN + N³/TM"  # the warptiled rungs' formula


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


_NO_TWIN = ("Triton's tl.dot chooses vector widths, warp layout and pipelining itself; "
            "triton_autotuned is the Triton matmul to compare with")


# t2 and t3 run t1's kernel off their TMA path, t4 v7's; their models then need its tiles.
_T1_FALLBACK = {f"T1_{n}": f"T1_{n}" for n in ("BM", "BN", "BK", "WM", "WN")}
# t2's tiles, which t2.1 to t2.3 keep so that each differs from the one before by its idea
_T2_TILES = {n: f"T2_{n}" for n in ("BM", "BN", "BK", "STAGES", "GROUP")}
_V7_FALLBACK = {f"V7_{n}": f"V7_{n}"
                for n in ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "STAGES", "GROUP")}
_SM90A = ("Hopper, built for sm_90a: wgmma, TMA and mbarrier transaction counts exist "
          "only on compute capability 9.0")
_TMA_TWIN = ("Triton writes no block barrier or descriptor; triton_persistent (TMA, wgmma, "
             "one program per SM) is the Triton matmul of the same instructions")


def _hopper(name, version, op_name, summary, precisions, params, model, formula,
            twin_note) -> Kernel:
    """A Hopper rung (sm_90a only: wgmma, TMA): cuda/<op_name>.cu, the op of that name."""
    return Kernel(
        name=name, op="matmul", backend="cuda", version=version, summary=summary,
        source=f"cuda/{op_name}.cu", precisions=precisions, loader=_op(op_name),
        params=params, model=model, formula=formula, twin_note=twin_note,
        min_capability=(9, 0), max_capability=(9, 0), needs=_SM90A,
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
                models.matmul_v1_5, _params(V="V1_5_V", T="V1_5_T"), "N³/V + N³",
                twin="triton_v1.5_thread_tiling"),
        _record("cuda_v2_register_tiling", "v2", "matmul_v2_register_tiling",
                "VxV accumulators in registers; per k an outer product of V values of A and B",
                models.matmul_v2, _params(V="V2_V", T="V2_T"), "2N³/V", twin="triton_v2_register_tiling"),
        _record("cuda_v3_smem_tiling", "v3", "matmul_v3_smem_tiling",
                "LxL block tile staged through SxL shared-memory tiles (cooperative fetch), "
                "VxV per thread",
                models.matmul_v3, _params(L="V3_L", S="V3_S", V="V3_V"),
                "global 2N³/L, shared 2N³/V", twin="triton_v3_smem_tiling"),
        # Past the lecture: the FFMA rungs (docs/performance/ffma_rungs.md). No Triton twin:
        # these are the layouts and schedules Triton's compiler chooses for a tl.dot itself.
        _record("cuda_v4_vectorized", "v4", "matmul_v4_vectorized",
                "v3 with float4 global and shared accesses and a bank-conflict-free thread layout",
                models.matmul_v4, _params(L="V4_L", S="V4_S", V="V4_V"),
                "global 2N³/L, shared 2N³/V (float4)", twin_note=_NO_TWIN),
        _record("cuda_v5_warptiling", "v5", "matmul_v5_warptiling",
                "block tile split into warp tiles and 4x4 thread pieces: a warp reads WM+WN "
                "floats per k",
                models.matmul_v5, _warptiled("V5"), _WARPTILED, twin_note=_NO_TWIN),
        _record("cuda_v6_pipelined", "v6", "matmul_v6_pipelined",
                "v5 fed by a ring of cp.async stages (loads overlap compute), L2-grouped "
                "block order",
                models.matmul_v6, _warptiled("V6", "STAGES", "GROUP"), _WARPTILED,
                twin_note=_NO_TWIN),
        _record("cuda_v7_lean_fetch", "v7", "matmul_v7_lean_fetch",
                "v6 whose interior tiles are copied from running pointers, with no mask, "
                "compare or branch",
                models.matmul_v7, _warptiled("V7", "STAGES", "GROUP"), _WARPTILED,
                twin_note=_NO_TWIN),
        _record("cuda_v8_split_k", "v8", "matmul_v8_split_k",
                "v7 with the k loop split over a thread-block cluster where the tiles leave "
                "SMs idle (sm_90)",
                models.matmul_v8,
                _warptiled("V8", "STAGES", "GROUP", "MAX_SPLITS", "MIN_SPLIT_TILES"),
                _WARPTILED, twin_note=_NO_TWIN),
        # The tensor-core rungs (docs/performance/tensor_cores.md): fp16 and bf16 in and out,
        # float32 accumulation, beside the Triton matmuls at the same precision.
        Kernel(
            name="cuda_t1_mma_sync", op="matmul", backend="cuda", version="t1",
            summary="warp-level mma.sync m16n8k16 fed by ldmatrix from a swizzled ring of "
                    "cp.async stages",
            source="cuda/matmul_t1_mma_sync.cu", precisions=("fp16", "bf16"),
            loader=_op("matmul_t1_mma_sync"),
            params=_params(BM="T1_BM", BN="T1_BN", BK="T1_BK", WM="T1_WM", WN="T1_WN",
                           STAGES="T1_STAGES", GROUP="T1_GROUP"),
            model=models.matmul_t1, formula="global N³/BN + N³/BM, shared N³/WN + N³/WM",
            twin_note="Triton's tl.dot on Hopper issues wgmma, not mma.sync; "
                      "triton_autotuned at the same precision is the Triton matmul to compare with",
            min_capability=(8, 0),
            needs="sm_80+: mma.sync on fp16 and bf16, ldmatrix, cp.async",
        ),
        _hopper("cuda_t2_wgmma_tma", "t2", "matmul_t2_wgmma_tma",
                "warpgroup wgmma reading shared memory that TMA filled; mbarrier phases "
                "(unaligned: staged if compute-bound, else t1's)", ("fp16", "bf16"),
                _params(**_T2_TILES, **_T1_FALLBACK),
                models.matmul_t2, "global N³/BN + N³/BM (TMA)", _TMA_TWIN),
        # t3's ideas added to t2 one at a time (t2.1 to t2.4), then t3 itself.
        _hopper("cuda_t2.1_producer_consumer", "t2.1", "matmul_t2_1_producer_consumer",
                "t2 warp-specialized: a TMA producer warpgroup ahead of two wgmma "
                "consumers, full and empty barriers (else t1's)",
                ("fp16", "bf16"), _params(**_T2_TILES, **_T1_FALLBACK),
                models.matmul_t2, "global N³/BN + N³/BM (TMA), as t2", _TMA_TWIN),
        _hopper("cuda_t2.2_register_split", "t2.2", "matmul_t2_2_register_split",
                "t2.1 whose producer gives registers to the consumers (setmaxnreg: 40 and "
                "232 per thread; else t1's)", ("fp16", "bf16"),
                _params(**_T2_TILES, **_T1_FALLBACK),
                models.matmul_t2, "global N³/BN + N³/BM (TMA), as t2", _TMA_TWIN),
        _hopper("cuda_t2.3_persistent", "t2.3", "matmul_t2_3_persistent",
                "t2.2 on a persistent grid: one block per SM walks the tiles, copies "
                "overlap the last tile's epilogue (else t1's)", ("fp16", "bf16"),
                _params(**_T2_TILES, **_T1_FALLBACK),
                models.matmul_t2, "global N³/BN + N³/BM (TMA), as t2", _TMA_TWIN),
        _hopper("cuda_t2.4_multicast", "t2.4", "matmul_t2_4_multicast",
                "t2.3 in clusters along m that share each B tile by TMA multicast "
                "(else t1's)", ("fp16", "bf16"),
                _params(BM="T3_BM", BN="T3_BN", BK="T3_BK", STAGES="T3_STAGES",
                        CLUSTER="T3_CLUSTER", GROUP="T3_GROUP", **_T1_FALLBACK),
                models.matmul_t3,
                "global N³/BN + N³/BM (TMA; L2 reads N³/BN + N³/(CLUSTER·BM)), as t3",
                _TMA_TWIN),
        _hopper("cuda_t3_warp_specialized", "t3", "matmul_t3_warp_specialized",
                "t2.4 storing C through shared memory with TMA: the whole warp-specialized "
                "kernel (else t1's)", ("fp16", "bf16"),
                _params(BM="T3_BM", BN="T3_BN", BK="T3_BK", STAGES="T3_STAGES",
                        CLUSTER="T3_CLUSTER", GROUP="T3_GROUP", **_T1_FALLBACK),
                models.matmul_t3,
                "global N³/BN + N³/BM (TMA; L2 reads N³/BN + N³/(CLUSTER·BM))", _TMA_TWIN),
        # tf32 (CVT_TF32_OPS): float32 in and out like the FFMA ladder, products on tensor
        # cores, beside triton_persistent and triton_autotuned at tf32.
        _hopper("cuda_t4_tf32", "t4", "matmul_t4_tf32",
                "t3's machinery at tf32 on C^T = B^T A^T: B^T from registers (rounded), "
                "A from shared memory (cut); else v7's", ("tf32",),
                _params(BM="T4_BM", BN="T4_BN", BK="T4_BK", STAGES="T4_STAGES",
                        CLUSTER="T4_CLUSTER", GROUP="T4_GROUP", **_V7_FALLBACK),
                models.matmul_t4,
                "global N³/BN + N³/BM (TMA; L2 reads N³/(CLUSTER·BN) + N³/BM)",
                "triton_persistent and triton_autotuned at tf32 make the same swap; "
                "triton_persistent's Hopper path is the one with TMA and wgmma"),
        # t5: t3 again (fp16, bf16), its last round of tiles split along k.
        _hopper("cuda_t5_stream_k", "t5", "matmul_t5_stream_k",
                "t3 with its last, partial round of tiles split along k (stream-K), "
                "partial sums met in global memory (else t1's)",
                ("fp16", "bf16"),
                _params(BM="T5_BM", BN="T5_BN", BK="T5_BK", STAGES="T5_STAGES",
                        CLUSTER="T5_CLUSTER", GROUP="T5_GROUP", MAX_SPLIT="T5_MAX_SPLIT",
                        MIN_RUN="T5_MIN_RUN", MIN_GAIN="T5_MIN_GAIN", **_T1_FALLBACK),
                models.matmul_t5,
                "global N³/BN + N³/BM (TMA; L2 reads N³/BN + N³/(CLUSTER·BM)), as t3",
                _TMA_TWIN),
    ]
