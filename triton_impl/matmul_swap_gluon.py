"""tf32 matmul with a row-major B on the H100, in Gluon: C^T = B^T A^T with B^T from
registers, and a wgmma pipeline that is legal.

  idea      the same product as matmul_persistent's swap (read its header first): wgmma
            reads a 32-bit operand from shared memory only K-major, a row-major B is
            N-major, so B^T becomes wgmma's left operand, which may come from REGISTERS.
            Each thread loads its fragment of a B tile with 32-bit shared loads, rounds it
            to TF32 (cvt.rn.tf32.f32), and wgmma multiplies it with A^T (K-major as
            loaded, read from shared memory). What this file adds is the ORDER of those
            steps. Gluon (triton.experimental.gluon) lets the kernel say where every wgmma
            wait and every fragment load goes; plain Triton decides that by itself.
  the race  wgmma is asynchronous and reads its register operand WHILE it runs; the
            registers may be written again only after a wgmma.wait_group has retired it.
            Triton 3.6 splits the swap's dot into four k8 wgmma, keeps three in flight
            across the loop's back-edge, and loads all four fragments of the next k-step
            at the top of the loop: into registers that in-flight wgmma still read.
            ptxas 12.8/13.0 does not stop it (it checks within one pass of the loop
            body, not across the back-edge; triton-lang/triton#9433). On the H100 the
            256 x 128 tile gave wrong, run-to-run different results; 128 x 256 happened to
            survive every test. bench/wgmma_hazards.py finds the race in the SASS.
            matmul_persistent and matmul_autotuned now wait for the dot at the end of each
            k-step (correct, ~0.65x cuBLAS instead of ~0.8x).
  pipeline  here: per k-step of 32 = four k8 slices; for slice s:
              load fragment s (LDS + cvt)  ->  wgmma s (async)  ->  wait until IN_FLIGHT
              wgmma are pending
            The fragment of slice s is loaded after the wait that retired the wgmma which
            last read those registers; with IN_FLIGHT = 3, ptxas keeps four fragment
            register sets (16 registers) and the tensor core always has 3 wgmma queued.
            k-step 0 is peeled out of the loop: if the loop could run zero times, the
            zero-initialised accumulator would meet the in-flight one after the loop and
            ptxas would serialise every wgmma (warning C7515, "non wgmma instructions
            defining accumulator registers"). Both properties are checked on the
            compiled kernel by the CPU tier (tests/cpu/test_wgmma_hazards.py).
  tile      cuBLAS's orientation: BLOCK_M = 256 rows of A, BLOCK_N = 128 columns of B, so
            the transposed tile is 128 x 256 and each of the two warpgroups issues
            m64n256k8: one 64 x 8 fragment (4 registers per thread) per 64 x 256 x 8 of
            work, half the fragment loads per FLOP of the 128 x 256 tile.
  batch     the kernel multiplies a stack: program pid takes product pid // tiles and tile
            pid % tiles of it (as matmul_batched's pointer kernel). A and B are described
            to TMA as 3-D tensors (batch, rows, cols) and loaded in [1, rows, cols] boxes,
            which land in shared memory as the 2-D tiles' bytes (a reshape of the view).
            The out-of-bounds zero fill is per dimension: a tile past row M or column K
            of product i reads zeros, never product i + 1's rows (a 2-D (batch * K, N)
            view of B would multiply them by A's zero-filled columns: 0 * inf = NaN). A
            broadcast operand (one matrix for the whole stack) is described as a stack
            of one and read at batch coordinate 0 (step 0). The 2-D product
            (matmul_persistent) is a stack of one: same tiles, same order, same bits.
  traffic   global loads as the blocked kernels: A M*K*ceil(N/BN), B N*K*ceil(M/BM)
            elements; stores M*N (masked pointer stores, so any N); times the products.
  measured  H100, 4096^3, against cuBLAS (TF32): 0.92-0.94x through triton_persistent by
            four timing methods (results/sweeps/h100; docs/performance/fast_matmul.md, with
            the IN_FLIGHT sweep that chose 3), with 2-D descriptors (the k-loop's SASS is
            the same with 3-D ones but for the TMA opcode). The batched launch through
            triton_batched: docs/performance/fast_matmul.md.
            Repeatable bit for bit, max |C - C64| / (|A||B|) 6.2e-5 (B rounded, A
            truncated by the tensor core, as the Triton swap).
  precond.  float32 stacks A (batch x M x K) and B (batch x K x N) on a CUDA device of
            compute capability 9.x (wgmma), each accepted by _memory.tma_compatible (unit inner
            stride, 16-byte aligned base, row and batch strides multiples of 16 bytes);
            the callers (matmul_persistent.matmul, which stages other layouts, and
            matmul_batched.tma_plan, which falls back) guarantee it. M, N, K, batch
            >= 1. No interpreter: Gluon kernels only compile.
  run       python -m pytest tests/cpu/test_wgmma_hazards.py               (CPU: compiles for sm_90)
            python -m pytest tests/gpu/test_matmul_persistent.py -k gluon  (GPU)
            python -m pytest tests/gpu/test_matmul_batched_gluon.py        (GPU, batched)
"""
from __future__ import annotations

import functools

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    mbarrier, tma, warpgroup_mma, warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from triton_impl import _common, _memory

NUM_WARPS = 8                        # two consumer warpgroups, 64 rows of C^T each
CONFIG = dict(BLOCK_M=256, BLOCK_N=128, BLOCK_K=32, STAGES=4, GROUP_M=8, IN_FLIGHT=3)


@gluon.jit
def _round_to_tf32(x):
    """Round to the nearest TF32, ties to even: one cvt.rn.tf32.f32 per element."""
    return gl.inline_asm_elementwise("cvt.rn.tf32.f32 $0, $1;", "=r,r", [x],
                                     dtype=gl.float32, is_pure=True, pack=1)


@gluon.jit
def _k_step(acc, a_smem, b_smem, ready, a_desc, b_desc, i, k_tiles, batch_a, batch_b,
            off_m, off_n, frag_layout: gl.constexpr, BLOCK_K: gl.constexpr,
            STAGES: gl.constexpr, IN_FLIGHT: gl.constexpr, ACCUMULATE: gl.constexpr):
    """k-step i: wait for its tiles, four (fragment, wgmma, wait) slices, then refill the
    stage that k-step i - 1 used with the tiles of k-step i + STAGES - 1."""
    s = i % STAGES
    mbarrier.wait(ready.index(s), (i // STAGES) & 1)
    bt = b_smem.index(s).permute((1, 0))                 # B^T: BN x BK, N-major
    at = a_smem.index(s).permute((1, 0))                 # A^T: BK x BM, K-major
    for kk in gl.static_range(BLOCK_K // 8):
        frag = _round_to_tf32(bt.slice(kk * 8, 8, dim=1).load(frag_layout))
        acc = warpgroup_mma(frag, at.slice(kk * 8, 8, dim=0), acc, is_async=True,
                            use_acc=ACCUMULATE or (kk > 0))
        # bt passes through the wait, so the next slice's loads stay below it
        acc, bt = warpgroup_mma_wait(num_outstanding=IN_FLIGHT, deps=[acc, bt])
    # every warp is past its loads of stage s - 1 (whose wgmma are retired: IN_FLIGHT < 4)
    gl.thread_barrier()
    j = i + STAGES - 1
    sj = j % STAGES
    _load_tiles(a_desc, b_desc, a_smem, b_smem, ready, sj, j * BLOCK_K, batch_a, batch_b,
                off_m, off_n, j < k_tiles)
    return acc


@gluon.jit
def _load_tiles(a_desc, b_desc, a_smem, b_smem, ready, stage, off_k, batch_a, batch_b,
                off_m, off_n, pred):
    """TMA: the A tile [batch_a, off_m:+BM, off_k:+BK] and the B tile [batch_b,
    off_k:+BK, off_n:+BN] into `stage` of the rings, counted on its barrier. The boxes are
    3-D with a batch extent of 1; in shared memory they are the 2-D tiles (same bytes)."""
    a_dst = a_smem.index(stage)
    b_dst = b_smem.index(stage)
    mbarrier.expect(ready.index(stage), a_desc.block_type.nbytes + b_desc.block_type.nbytes,
                    pred=pred)
    tma.async_copy_global_to_shared(a_desc, [batch_a, off_m, off_k], ready.index(stage),
                                    a_dst.reshape(a_desc.block_type.shape), pred=pred)
    tma.async_copy_global_to_shared(b_desc, [batch_b, off_k, off_n], ready.index(stage),
                                    b_dst.reshape(b_desc.block_type.shape), pred=pred)


@gluon.jit
def matmul_swap_gluon_kernel(
    a_desc, b_desc, c_ptr,                # A (batch x M x K), B (batch x K x N) descriptors, C
    M, N, K,                              # sizes of one product
    stride_cm,                            # C's row stride in elements
    step_a, step_b,                       # batch coordinate per product: 1, or 0 (broadcast)
    stride_cb,                            # C's batch stride in elements
    BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr,  # the tile
    STAGES: gl.constexpr,                 # tiles in flight (shared-memory ring)
    GROUP_M: gl.constexpr,                # rows of tiles per group of the launch order
    IN_FLIGHT: gl.constexpr,              # wgmma left pending after each slice (< 4)
):
    NUM_WARPS: gl.constexpr = gl.num_warps()
    pid = gl.program_id(0)
    # Tile counts as _common.tile_count: gl.cdiv's M + BLOCK_M - 1 wraps for M near 2^31.
    num_pid_m = M // BLOCK_M + (M % BLOCK_M + BLOCK_M - 1) // BLOCK_M
    num_pid_n = N // BLOCK_N + (N % BLOCK_N + BLOCK_N - 1) // BLOCK_N
    tiles = num_pid_m * num_pid_n                        # i32 ok: below the grid (< 2^31)
    batch = pid // tiles                                 # which product of the stack ...
    tile = pid % tiles                                   # ... and which tile of its C
    per_group = GROUP_M * num_pid_n                      # the grouped order of matmul_grouped
    first_m = (tile // per_group) * GROUP_M
    group_rows = gl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (tile % per_group) % group_rows
    pid_n = (tile % per_group) // group_rows
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    batch_a = batch * step_a                             # a broadcast operand: always 0
    batch_b = batch * step_b

    # C^T tile (BN x BM) = B^T (BN x BK, registers) @ A^T (BK x BM, shared, K-major)
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[NUM_WARPS, 1], instr_shape=[16, BLOCK_M, 8])
    frag_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc_layout,
                                                    k_width=1)
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M, BLOCK_K],
                                                                   gl.float32)
    b_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_K, BLOCK_N],
                                                                   gl.float32)
    a_smem = gl.allocate_shared_memory(gl.float32, [STAGES, BLOCK_M, BLOCK_K], a_layout)
    b_smem = gl.allocate_shared_memory(gl.float32, [STAGES, BLOCK_K, BLOCK_N], b_layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for st in gl.static_range(STAGES):
        mbarrier.init(ready.index(st), count=1)
    k_tiles = K // BLOCK_K + (K % BLOCK_K + BLOCK_K - 1) // BLOCK_K
    for st in gl.static_range(STAGES - 1):               # prologue: the first tiles
        if st < k_tiles:
            _load_tiles(a_desc, b_desc, a_smem, b_smem, ready, st, st * BLOCK_K, batch_a,
                        batch_b, off_m, off_n, True)

    gl.static_assert(BLOCK_K % 8 == 0)
    gl.static_assert(IN_FLIGHT < BLOCK_K // 8)
    acc = gl.zeros([BLOCK_N, BLOCK_M], gl.float32, acc_layout)
    # k-step 0 peeled (header: "pipeline"); its first wgmma ignores acc (use_acc=False)
    acc = _k_step(acc, a_smem, b_smem, ready, a_desc, b_desc, 0, k_tiles, batch_a, batch_b,
                  off_m, off_n, frag_layout, BLOCK_K, STAGES, IN_FLIGHT, False)
    for i in range(1, k_tiles):
        acc = _k_step(acc, a_smem, b_smem, ready, a_desc, b_desc, i, k_tiles, batch_a,
                      batch_b, off_m, off_n, frag_layout, BLOCK_K, STAGES, IN_FLIGHT, True)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
    for st in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(st))

    # acc[r, c] is C[batch, off_m + c, off_n + r]: store it transposed, by pointers (int64:
    # a stack of C passes 2^31 elements fast)
    c_ptr += batch.to(gl.int64) * stride_cb
    cols = off_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, acc_layout))
    rows = off_m + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(0, acc_layout))
    c_ptrs = c_ptr + rows[None, :].to(gl.int64) * stride_cm + cols[:, None]
    gl.store(c_ptrs, acc, mask=(rows[None, :] < M) & (cols[:, None] < N))


def available(device: torch.device) -> bool:
    """True where this kernel runs: a CUDA device with wgmma (compute capability 9.x), not
    the interpreter."""
    if _common.interpreting() or device.type != "cuda":
        return False
    return _common.cuda_properties(device).major == 9


@functools.lru_cache(maxsize=None)
def _shared_layout(rows: int, cols: int):
    """The layout of a [1, rows, cols] box: TMA writes it as the 2-D tile's swizzled bytes."""
    return gl.NVMMASharedLayout.get_default_for([1, rows, cols], gl.float32)


def _descriptor(t: torch.Tensor, rows: int, cols: int):
    """A 3-D descriptor of the stack t with [1, rows, cols] boxes, and its batch step."""
    step, s_b, s_r, s_c = _memory.stack_strides(t)
    shape = [t.shape[0] if step else 1, t.shape[1], t.shape[2]]
    return TensorDescriptor(t, shape, [s_b, s_r, s_c], [1, rows, cols],
                            _shared_layout(rows, cols)), step


def launch(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, config: dict | None = None):
    """C[i] = A[i] @ B[i] in tf32 for a stack: a (batch x M x K), b (batch x K x N), c
    (batch x M x N, unit inner stride), where a and b satisfy _memory.tma_compatible; a batch
    dimension of stride 0 (Tensor.expand) reads the one matrix for every product. M, N,
    K, batch >= 1."""
    cfg = dict(CONFIG, **(config or {}))
    batch, M, K = a.shape
    N = b.shape[2]
    assert b.shape == (batch, K, N) and c.shape == (batch, M, N) and c.stride(2) == 1
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    a_desc, step_a = _descriptor(a, bm, bk)
    b_desc, step_b = _descriptor(b, bk, bn)
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn) * batch,)
    if grid[0] >= 2**31:
        raise ValueError(f"matmul_swap_gluon: {grid[0]} programs (tiles x batch), more than "
                         f"the 2^31 - 1 CUDA allows")
    matmul_swap_gluon_kernel[grid](a_desc, b_desc, c, M, N, K, c.stride(1), step_a, step_b,
                                   c.stride(0), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                   STAGES=cfg["STAGES"], GROUP_M=cfg["GROUP_M"],
                                   IN_FLIGHT=cfg["IN_FLIGHT"], num_warps=NUM_WARPS)


def matmul(a: torch.Tensor, b: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """C = A @ B in tf32 (B rounded to TF32, A truncated by the tensor core). A and B as the
    header's precondition says; matmul_persistent.matmul checks and stages them. The
    product is a stack of one (batch coordinate 0)."""
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=torch.float32, device=a.device)
    launch(a[None], b[None], c[None], config)
    return c
