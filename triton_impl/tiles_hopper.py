"""Tile parameters of the Hopper-specific matmuls, in a module that does not import Triton.

Same reason as triton_impl/tiles.py: the registry and the traffic models read tiles from
here without defining any @triton.jit kernel (which would fix the choice between the GPU
and the interpreter too early). The kernel is

    matmul_persistent   TMA tensor descriptors + a persistent grid (tf32, fp16, bf16)

Shared memory (H100: 227 KB per block) decides most of these numbers:
  persistent pipeline  num_stages * (BM + BN) * BK * bytes
  persistent epilogue  BM * BN / EPILOGUE_SPLIT * bytes of the output (TMA store staging)
so a 128x256x64 fp16 tile has 48 KB per stage: 3 stages + a 64 KB epilogue = 208 KB, or
4 stages + a split epilogue (two 32 KB halves) = 224 KB. fp32 operands (tf32) take half
the k-depth for the same bytes per stage.
"""
from __future__ import annotations

SMEM_BYTES = 227 * 1024          # H100 and H200: shared memory one block may use (232448 bytes)


def persistent_cfg(bm, bn, bk, warps, stages, *, group=8, split=1, tma_store=True,
                   warp_specialize=False, flatten=None, ctas=1):
    """One configuration of matmul_persistent. flatten=None picks the default: flatten
    the tile and k loops into one pipelined loop, except under warp specialisation,
    which Triton 3.6 supports on Hopper only for the unflattened loop."""
    if flatten is None:
        flatten = not warp_specialize
    cfg = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, EPILOGUE_SPLIT=split,
               TMA_STORE=tma_store, WARP_SPECIALIZE=warp_specialize, FLATTEN=flatten,
               num_warps=warps, num_stages=stages)
    if ctas != 1:
        cfg["num_ctas"] = ctas     # a cluster of CTAs per program (launch option)
    return cfg


def persistent_smem_bytes(cfg: dict, elem_bytes: int) -> int:
    """Shared memory of one configuration: the operand ring plus the TMA-store staging."""
    e = elem_bytes
    ring = cfg["num_stages"] * (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * cfg["BLOCK_K"] * e
    staging = cfg["BLOCK_M"] * cfg["BLOCK_N"] // cfg["EPILOGUE_SPLIT"] * e if cfg["TMA_STORE"] else 0
    return ring + staging


# matmul_persistent: autotune candidates per layout (first = what small problems run).
# From the H100 probe of 2026-11-22 (docs/performance/fast_matmul.md has the numbers).
#  fp16/bf16: the 128x256x64 tile with 8 warps (2 consumer warpgroups, 64 KB epilogue
#    staging), its GROUP_M=16 order, and the warp-specialised 4-warp schedules.
#  tf32 (K-major B: a column-major B as given, e.g. x.T): the flattened loop with
#    the split epilogue (3 stages of 128x256x32 fp32 do not fit beside a whole-tile
#    staging buffer). 0.96x cuBLAS for 128x256x32.
#  tf32-swap (row-major B, C^T = B^T A^T; the fallback of matmul_swap_gluon, see
#    matmul_persistent's header): never flattened (with FLATTEN the compiler re-zeroes the
#    accumulator inside the loop and ptxas serialises every wgmma, C7515). With
#    wait_for_dot (each k-step's wgmma retired before the next fragment loads) 256x128
#    measured 0.69x cuBLAS and 128x256 0.64x; without it both raced and 256x128 gave wrong
#    results. Warp specialisation does not compile with wait_for_dot.
PERSISTENT_CONFIGS = {
    "fp16": [
        persistent_cfg(128, 256, 64, 8, 3),
        persistent_cfg(128, 256, 64, 8, 3, group=16),
        persistent_cfg(128, 256, 64, 4, 3, warp_specialize=True),
        persistent_cfg(256, 128, 64, 4, 3, warp_specialize=True),
        persistent_cfg(128, 256, 64, 4, 4, tma_store=False, warp_specialize=True),
        persistent_cfg(128, 128, 64, 8, 5),
    ],
    "tf32": [
        persistent_cfg(128, 256, 32, 8, 3, split=2),
        persistent_cfg(128, 256, 32, 8, 3, split=2, flatten=False),
        persistent_cfg(128, 128, 32, 8, 5, split=2),
        persistent_cfg(256, 128, 32, 8, 3, split=2),
    ],
    "tf32-swap": [
        persistent_cfg(256, 128, 32, 8, 3, split=2, flatten=False),
        persistent_cfg(128, 256, 32, 8, 3, split=2, flatten=False),
    ],
}
PERSISTENT_CONFIGS["bf16"] = PERSISTENT_CONFIGS["fp16"]
# Stacks of products (3-D descriptors, matmul_persistent's header "batch"): Triton 3.6's
# warp specialisation pass fails on them (the reshape of a 3-D box), so without those.
for _key in list(PERSISTENT_CONFIGS):
    PERSISTENT_CONFIGS[_key + "-stack"] = [c for c in PERSISTENT_CONFIGS[_key]
                                           if not c["WARP_SPECIALIZE"]]

# Under the interpreter nothing is timed: one small configuration per precision (the
# interpreter runs TMA descriptors on the CPU and ignores warps and stages).
PERSISTENT_INTERPRETER_CONFIG = {p + stack: persistent_cfg(32, 32, 16, 4, 2, group=2)
                                 for p in ("tf32", "tf32-swap", "fp16", "bf16")
                                 for stack in ("", "-stack")}

