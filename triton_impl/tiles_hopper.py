"""Tile parameters of the Hopper-specific matmuls, in a module that does not import Triton.

Same reason as triton_impl/tiles.py: the registry and the traffic models read tiles from
here without defining any @triton.jit kernel (which would fix the choice between the GPU
and the interpreter too early). The kernels are

    matmul_persistent   TMA tensor descriptors + a persistent grid (tf32, fp16, bf16)
    matmul_gluon_fma    fp32-ieee FFMA written in Gluon with an explicit register layout

Shared memory (H100: 227 KB per block) decides most of these numbers:
  persistent pipeline  num_stages * (BM + BN) * BK * bytes
  persistent epilogue  BM * BN / EPILOGUE_SPLIT * bytes of the output (TMA store staging)
so a 128x256x64 fp16 tile has 48 KB per stage: 3 stages + a 64 KB epilogue = 208 KB, or
4 stages + a split epilogue (two 32 KB halves) = 224 KB. fp32 operands (tf32) take half
the k-depth for the same bytes per stage.
"""
from __future__ import annotations

SMEM_BYTES = 227 * 1024          # H100: shared memory one block may use (232448 bytes)
ELEM_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}


def persistent_cfg(bm, bn, bk, warps, stages, *, group=8, split=1, tma_store=True,
                   warp_specialize=False, flatten=None):
    """One configuration of matmul_persistent. flatten=None picks the default: flatten
    the tile and k loops into one pipelined loop, except under warp specialisation,
    which Triton 3.6 supports on Hopper only for the unflattened loop."""
    if flatten is None:
        flatten = not warp_specialize
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, EPILOGUE_SPLIT=split,
                TMA_STORE=tma_store, WARP_SPECIALIZE=warp_specialize, FLATTEN=flatten,
                num_warps=warps, num_stages=stages)


def persistent_smem_bytes(cfg: dict, precision: str) -> int:
    """Shared memory of one configuration: the operand ring plus the TMA-store staging."""
    e = ELEM_BYTES[precision]
    ring = cfg["num_stages"] * (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * cfg["BLOCK_K"] * e
    staging = cfg["BLOCK_M"] * cfg["BLOCK_N"] // cfg["EPILOGUE_SPLIT"] * e if cfg["TMA_STORE"] else 0
    return ring + staging


# matmul_persistent: autotune candidates per precision (first = what small problems run).
# Provisional: the H100 probe (triton_impl/tune_probe.py) decides the final lists.
PERSISTENT_CONFIGS = {
    "fp16": [
        persistent_cfg(128, 256, 64, 8, 3),
        persistent_cfg(128, 256, 64, 8, 4, split=2),
        persistent_cfg(256, 128, 64, 8, 3),
        persistent_cfg(128, 128, 64, 8, 4),
        persistent_cfg(128, 256, 64, 4, 3, warp_specialize=True),
    ],
    "tf32": [
        persistent_cfg(128, 256, 32, 8, 3, split=2),
        persistent_cfg(256, 128, 32, 8, 3, split=2),
        persistent_cfg(128, 128, 32, 8, 4),
        persistent_cfg(128, 128, 32, 4, 4),
    ],
}
PERSISTENT_CONFIGS["bf16"] = PERSISTENT_CONFIGS["fp16"]

# Under the interpreter nothing is timed: one small configuration per precision (the
# interpreter runs TMA descriptors on the CPU and ignores warps and stages).
PERSISTENT_INTERPRETER_CONFIG = {p: persistent_cfg(32, 32, 16, 4, 2, group=2)
                                 for p in ("tf32", "fp16", "bf16")}


def gluon_fma_cfg(bm, bn, bk, warps, stages, *, tm=8, tn=8, tpw_m=4, group=8):
    """One configuration of matmul_gluon_fma: each thread owns a TM x TN block of C;
    a warp is TPW_M x (32 / TPW_M) threads; warps tile the rest of BM x BN."""
    tpw_n = 32 // tpw_m
    wpc_m = bm // (tm * tpw_m)
    assert bm % (tm * tpw_m) == 0 and warps % wpc_m == 0, (bm, tm, tpw_m, warps)
    assert bn == tn * tpw_n * (warps // wpc_m), (bn, tn, tpw_n, warps, wpc_m)
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, TM=tm, TN=tn,
                TPW_M=tpw_m, WPC_M=wpc_m, num_warps=warps, num_stages=stages)


# matmul_gluon_fma: candidates (provisional, as above). 8x8 per thread is the classic
# SGEMM register block: per k, 2+2 16-byte shared loads feed 64 FFMAs.
GLUON_FMA_CONFIGS = [
    gluon_fma_cfg(128, 128, 16, 8, 4),
    gluon_fma_cfg(128, 128, 16, 8, 3),
    gluon_fma_cfg(128, 128, 32, 8, 3),
    gluon_fma_cfg(64, 128, 16, 4, 3, tpw_m=4),
    gluon_fma_cfg(128, 64, 16, 4, 3, tpw_m=8),
    gluon_fma_cfg(128, 256, 16, 8, 3, tn=16),
]
