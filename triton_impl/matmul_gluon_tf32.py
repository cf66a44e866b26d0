"""tf32 matmul with a row-major B, in Gluon (Triton's explicit-layout dialect), for Hopper.

  problem   wgmma reads a 32-bit operand from shared memory only K-major (the k index
            contiguous). A row-major B (K x N) is N-major, so somebody must transpose it.
            Triton 3.6's own choices (matmul_persistent's header): 4-byte cp.async into a
            K-major buffer ("direct", 0.20x cuBLAS), or C^T = B^T A^T with B^T's fragments
            read from shared memory into registers ("swap", ~0.8x).
  idea      transpose B on its way from global memory to shared memory, in registers, where
            it costs nothing: every thread loads 4 consecutive k of one column n (four
            coalesced 32-bit loads: a warp reads 32 neighbouring columns, 128 bytes per k),
            and writes them with ONE 16-byte store into the K-major, 128-byte-swizzled
            buffer that wgmma reads. The swizzle (16-byte chunk index XOR row % 8) puts the
            32 lanes' chunks of 8 neighbouring rows on 8 different chunk positions: no bank
            conflicts. A comes by TMA (row-major A is K-major already).
            Gluon is needed because the choice is a LAYOUT: which registers of which thread
            hold which (k, n). Triton picks layouts itself (and picks 4-byte copies); Gluon
            takes them from the programmer: B_LOAD below, and the NVMMA layouts.
  schedule  one partition of 8 warps = 2 warpgroups; each warpgroup owns 64 rows of the
            128 x 256 tile (128 fp32 accumulators per thread). Per k-step i (BK = 32):
              store B_i (loaded one step earlier) into stage i % S, fence, barrier
              load B_{i+1} into registers            (in flight during the wgmma)
              TMA A_{i+S-2} into stage (i-2) % S     (both warpgroups finished with it)
              wait for A_i, wgmma on stage i % S (async), wait until 1 wgmma is in flight
            The barrier after the stores is what lets one thread reuse a stage for TMA: at
            barrier i, both warpgroups have retired wgmma i-2.
  traffic   as the blocked kernels: A M*K*ceil(N/BN), B N*K*ceil(M/BM), C M*N elements.
  precision tf32 in, fp32 accumulate. B is rounded to TF32 (nearest, cvt.rna) in registers;
            A, read by wgmma straight from TMA's buffer, is truncated by the tensor core
            (as in Triton's own K-major tf32 path).
  precond.  fp32 A (M x K) with 16-byte aligned rows and unit inner stride (TMA); B (K x N)
            with unit inner stride (any row stride); contiguous C. Any M, N, K >= 1. The
            callers (matmul_persistent) fall back to the other paths for anything else.
"""
from __future__ import annotations

import functools

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    async_copy, fence_async_shared, mbarrier, tma, warpgroup_mma, warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

NAME = "gluon_tf32_row_b"
BLOCK_M, BLOCK_N, BLOCK_K = 128, 256, 32
NUM_WARPS = 8
DEFAULT = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=32, STAGES=4, GROUP_M=8, ROUND=True)


@gluon.jit
def _round_tf32(x):
    return gl.inline_asm_elementwise("cvt.rna.tf32.f32 $0, $1;", "=r,r", [x],
                                     dtype=gl.float32, is_pure=True, pack=1)


@gluon.jit
def matmul_gluon_tf32_kernel(
    a_desc,                               # TMA descriptor of A (M x K), box BM x BK
    b_ptr, c_ptr,                         # B (K x N, unit inner stride), C (M x N, contiguous)
    M, N, K,
    stride_bk, stride_cm,                 # row strides in elements
    BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr,
    STAGES: gl.constexpr, GROUP_M: gl.constexpr, ROUND: gl.constexpr,
    EVEN_K: gl.constexpr,                 # K % BLOCK_K == 0: no k mask on B's loads
):
    gl.static_assert(STAGES >= 3)
    NUM_WARPS: gl.constexpr = gl.num_warps()

    # grouped tile order (matmul_grouped)
    pid = gl.program_id(0)
    num_pid_m = gl.cdiv(M, BLOCK_M)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_pid_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = gl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N

    # layouts: the accumulator (wgmma, 2 warpgroups stacked along M), B in registers
    # (4 consecutive k of one n per thread: k is the fastest register index), and the
    # K-major 128-byte-swizzled buffer wgmma reads B from.
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[NUM_WARPS, 1], instr_shape=[16, BLOCK_N, 8])
    b_reg: gl.constexpr = gl.BlockedLayout(size_per_thread=[4, 1], threads_per_warp=[1, 32],
                                           warps_per_cta=[1, NUM_WARPS], order=[0, 1])
    b_smem_layout: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128,
                                                       element_bitwidth=32, rank=2)
    a_smem = gl.allocate_shared_memory(gl.float32, [STAGES, BLOCK_M, BLOCK_K], a_desc.layout)
    b_smem = gl.allocate_shared_memory(gl.float32, [STAGES, BLOCK_N, BLOCK_K], b_smem_layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for st in gl.static_range(STAGES):
        mbarrier.init(ready.index(st), count=1)

    k_tiles = gl.cdiv(K, BLOCK_K)
    # prologue: A for steps 0 .. S-3 (step i+S-2 is issued in step i)
    for st in gl.static_range(STAGES - 2):
        if st < k_tiles:
            mbarrier.expect(ready.index(st), a_desc.block_type.nbytes)
            tma.async_copy_global_to_shared(a_desc, [off_m, st * BLOCK_K], ready.index(st),
                                            a_smem.index(st))

    offs_k = gl.arange(0, BLOCK_K, layout=gl.SliceLayout(1, b_reg))
    offs_n = off_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, b_reg))
    n_ok = offs_n[None, :] < N
    b_ptrs = b_ptr + offs_k[:, None].to(gl.int64) * stride_bk + offs_n[None, :]
    if EVEN_K:
        b_regs = gl.load(b_ptrs, mask=n_ok, other=0.0)
    else:
        b_regs = gl.load(b_ptrs, mask=n_ok & (offs_k[:, None] < K), other=0.0)

    acc = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, acc_layout)
    for i in range(k_tiles):
        s = i % STAGES
        # B_i: registers -> K-major stage (the transpose is the permute: free)
        if ROUND:
            b_regs = _round_tf32(b_regs)
        b_smem.index(s).store(gl.permute(b_regs, [1, 0]))
        fence_async_shared()
        gl.thread_barrier()
        # B_{i+1}: in flight while wgmma i runs
        b_ptrs += BLOCK_K * stride_bk
        if EVEN_K:
            b_regs = gl.load(b_ptrs, mask=n_ok & (i + 1 < k_tiles), other=0.0)
        else:
            k_left = K - (i + 1) * BLOCK_K
            b_regs = gl.load(b_ptrs, mask=n_ok & (offs_k[:, None] < k_left), other=0.0)
        # A_{i+S-2} into the stage both warpgroups retired at this barrier
        j = i + STAGES - 2
        if j < k_tiles:
            sj = j % STAGES
            mbarrier.expect(ready.index(sj), a_desc.block_type.nbytes)
            tma.async_copy_global_to_shared(a_desc, [off_m, j * BLOCK_K], ready.index(sj),
                                            a_smem.index(sj))
        mbarrier.wait(ready.index(s), (i // STAGES) & 1)
        acc = warpgroup_mma(a_smem.index(s), b_smem.index(s).permute((1, 0)), acc,
                            is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=1, deps=[acc])
    acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
    for st in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(st))

    rows = off_m + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, acc_layout))
    cols = off_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, acc_layout))
    c_ptrs = c_ptr + rows[:, None].to(gl.int64) * stride_cm + cols[None, :]
    gl.store(c_ptrs, acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@gluon.jit
def matmul_gluon_tf32_cp_kernel(
    a_desc, b_ptr, c_ptr, M, N, K, stride_bk, stride_cm,
    BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr,
    STAGES: gl.constexpr, GROUP_M: gl.constexpr, ROUND: gl.constexpr,
    EVEN_K: gl.constexpr,
):
    gl.static_assert(STAGES >= 3)
    NUM_WARPS: gl.constexpr = gl.num_warps()
    pid = gl.program_id(0)
    num_pid_m = gl.cdiv(M, BLOCK_M)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_pid_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = gl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N

    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[NUM_WARPS, 1], instr_shape=[16, BLOCK_N, 8])
    # cp.async of 4 bytes per element: a warp copies 4 k x 8 n (four full 32-byte sectors);
    # in the K-major swizzled buffer these 32 elements fall in 32 different banks.
    b_cp: gl.constexpr = gl.BlockedLayout(size_per_thread=[1, 1], threads_per_warp=[4, 8],
                                          warps_per_cta=[1, NUM_WARPS], order=[1, 0])
    b_smem_layout: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=BLOCK_K * 4,
                                                       element_bitwidth=32, rank=2)
    a_smem = gl.allocate_shared_memory(gl.float32, [STAGES, BLOCK_M, BLOCK_K], a_desc.layout)
    b_smem = gl.allocate_shared_memory(gl.float32, [STAGES, BLOCK_N, BLOCK_K], b_smem_layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for st in gl.static_range(STAGES):
        mbarrier.init(ready.index(st), count=1)

    k_tiles = gl.cdiv(K, BLOCK_K)
    offs_k = gl.arange(0, BLOCK_K, layout=gl.SliceLayout(1, b_cp))
    offs_n = off_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, b_cp))
    n_ok = offs_n[None, :] < N
    b_offs = offs_k[:, None] * stride_bk + offs_n[None, :]

    # prologue: steps 0 .. S-3 (step i+S-2 is issued in step i)
    for st in gl.static_range(STAGES - 2):
        if st < k_tiles:
            mbarrier.expect(ready.index(st), a_desc.block_type.nbytes)
            tma.async_copy_global_to_shared(a_desc, [off_m, st * BLOCK_K], ready.index(st),
                                            a_smem.index(st))
        b_base = b_ptr + stride_bk.to(gl.int64) * (st * BLOCK_K)
        if EVEN_K:
            async_copy.async_copy_global_to_shared(b_smem.index(st).permute((1, 0)),
                                                   b_base + b_offs, mask=n_ok & (st < k_tiles))
        else:
            async_copy.async_copy_global_to_shared(b_smem.index(st).permute((1, 0)),
                                                   b_base + b_offs,
                                                   mask=n_ok & (offs_k[:, None] < K - st * BLOCK_K))
        async_copy.commit_group()

    acc = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, acc_layout)
    for i in range(k_tiles):
        s = i % STAGES
        async_copy.wait_group(STAGES - 3)          # this thread's part of B_i has landed
        fence_async_shared()
        gl.thread_barrier()                        # everyone's part; wgmma i-2 retired by all
        j = i + STAGES - 2
        sj = j % STAGES
        if j < k_tiles:
            mbarrier.expect(ready.index(sj), a_desc.block_type.nbytes)
            tma.async_copy_global_to_shared(a_desc, [off_m, j * BLOCK_K], ready.index(sj),
                                            a_smem.index(sj))
        b_base = b_ptr + stride_bk.to(gl.int64) * (j * BLOCK_K)
        if EVEN_K:
            async_copy.async_copy_global_to_shared(b_smem.index(sj).permute((1, 0)),
                                                   b_base + b_offs, mask=n_ok & (j < k_tiles))
        else:
            async_copy.async_copy_global_to_shared(b_smem.index(sj).permute((1, 0)),
                                                   b_base + b_offs,
                                                   mask=n_ok & (offs_k[:, None] < K - j * BLOCK_K))
        async_copy.commit_group()
        mbarrier.wait(ready.index(s), (i // STAGES) & 1)
        acc = warpgroup_mma(a_smem.index(s), b_smem.index(s).permute((1, 0)), acc,
                            is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=1, deps=[acc])
    acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
    async_copy.wait_group(0)
    for st in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(st))

    rows = off_m + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, acc_layout))
    cols = off_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, acc_layout))
    c_ptrs = c_ptr + rows[:, None].to(gl.int64) * stride_cm + cols[None, :]
    gl.store(c_ptrs, acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@gluon.jit
def _pi_rows(rho, PERMUTE: gl.constexpr):
    """Logical row of the register operand -> physical row of B^T in shared memory. With
    PERMUTE, rows r and r+8 of every 16-row group (the two rows one thread holds) sit
    next to each other: physical = 16*(rho//16) + 2*(rho%8) + (rho//8)%2."""
    if PERMUTE:
        return (rho // 16) * 16 + (rho % 8) * 2 + (rho // 8) % 2
    else:
        return rho


@gluon.jit
def matmul_gluon_tf32_swap_kernel(
    a_desc, b_desc, c_ptr, M, N, K, stride_cm,
    BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr,
    STAGES: gl.constexpr, GROUP_M: gl.constexpr, PERMUTE: gl.constexpr,
    IN_FLIGHT: gl.constexpr,
):
    NUM_WARPS: gl.constexpr = gl.num_warps()
    pid = gl.program_id(0)
    num_pid_m = gl.cdiv(M, BLOCK_M)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_pid_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = gl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N

    # C^T tile (BN x BM) = B^T (BN x BK, registers) @ A^T (BK x BM, shared, K-major)
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[NUM_WARPS, 1], instr_shape=[16, BLOCK_M, 8])
    frag_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=1)
    a_smem = gl.allocate_shared_memory(gl.float32, [STAGES, BLOCK_M, BLOCK_K], a_desc.layout)
    b_smem = gl.allocate_shared_memory(gl.float32, [STAGES, BLOCK_K, BLOCK_N], b_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for st in gl.static_range(STAGES):
        mbarrier.init(ready.index(st), count=1)
    k_tiles = gl.cdiv(K, BLOCK_K)
    nbytes: gl.constexpr = a_desc.block_type.nbytes + b_desc.block_type.nbytes
    for st in gl.static_range(STAGES - 1):
        if st < k_tiles:
            mbarrier.expect(ready.index(st), nbytes)
            tma.async_copy_global_to_shared(a_desc, [off_m, st * BLOCK_K], ready.index(st),
                                            a_smem.index(st))
            tma.async_copy_global_to_shared(b_desc, [st * BLOCK_K, off_n], ready.index(st),
                                            b_smem.index(st))

    gl.static_assert(BLOCK_K == 32)
    acc = gl.zeros([BLOCK_N, BLOCK_M], gl.float32, acc_layout)
    for i in range(k_tiles):
        s = i % STAGES
        mbarrier.wait(ready.index(s), (i // STAGES) & 1)
        bt = b_smem.index(s).permute((1, 0))                 # B^T: BN x BK, N-major
        if PERMUTE:
            bt = bt.reshape([BLOCK_N // 16, 8, 2, BLOCK_K]).permute((0, 2, 1, 3)).reshape(
                [BLOCK_N, BLOCK_K])
        at = a_smem.index(s).permute((1, 0))                 # A^T: BK x BM, K-major
        # one k8 slice at a time: its fragment is loaded only after the wait that retired
        # the slice that used the same registers IN_FLIGHT+1 groups ago
        for kk in gl.static_range(BLOCK_K // 8):
            frag = bt.slice(kk * 8, 8, dim=1).load(frag_layout)
            acc = warpgroup_mma(frag, at.slice(kk * 8, 8, dim=0), acc, is_async=True,
                                use_acc=(i > 0) or (kk > 0))
            # bt passes through the wait: the next slice's loads cannot move above it
            acc, bt = warpgroup_mma_wait(num_outstanding=IN_FLIGHT, deps=[acc, bt])
        gl.thread_barrier()                                  # wgmma i-1 retired everywhere
        j = i + STAGES - 1
        sj = j % STAGES
        refill = j < k_tiles
        mbarrier.expect(ready.index(sj), nbytes, pred=refill)
        tma.async_copy_global_to_shared(a_desc, [off_m, j * BLOCK_K], ready.index(sj),
                                        a_smem.index(sj), pred=refill)
        tma.async_copy_global_to_shared(b_desc, [j * BLOCK_K, off_n], ready.index(sj),
                                        b_smem.index(sj), pred=refill)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
    for st in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(st))

    rho = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, acc_layout))
    cols = off_n + _pi_rows(rho, PERMUTE)                    # C^T's rows are C's columns
    rows = off_m + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(0, acc_layout))
    c_ptrs = c_ptr + rows[None, :].to(gl.int64) * stride_cm + cols[:, None]
    gl.store(c_ptrs, acc, mask=(rows[None, :] < M) & (cols[:, None] < N))


def a_layout(block_m: int, block_k: int):
    return gl.NVMMASharedLayout.get_default_for([block_m, block_k], gl.float32)


def supported(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Inputs this kernel takes as they are: fp32 CUDA tensors, A with TMA-able rows, B
    with a unit inner stride (row-major, any row stride)."""
    return (a.dtype == torch.float32 and b.dtype == torch.float32 and a.is_cuda
            and a.stride(1) == 1 and (a.stride(0) * 4) % 16 == 0 and a.data_ptr() % 16 == 0
            and b.stride(1) == 1 and a.shape[0] > 0 and a.shape[1] > 0 and b.shape[1] > 0)


def matmul(a: torch.Tensor, b: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    cfg = dict(DEFAULT, **(config or {}))
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=torch.float32, device=a.device)
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk], a_layout(bm, bk))
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    if cfg.get("SWAP"):
        bm, bn = cfg.get("BLOCK_M", 128), cfg.get("BLOCK_N", 256)
        a_desc = TensorDescriptor.from_tensor(a, [bm, bk], a_layout(bm, bk))
        b_desc = TensorDescriptor.from_tensor(
            b, [bk, bn], gl.NVMMASharedLayout.get_default_for([bk, bn], gl.float32))
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        matmul_gluon_tf32_swap_kernel[grid](a_desc, b_desc, c, M, N, K, c.stride(0),
                                            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                            STAGES=cfg["STAGES"], GROUP_M=cfg["GROUP_M"],
                                            PERMUTE=cfg.get("PERMUTE", False),
                                            IN_FLIGHT=cfg.get("IN_FLIGHT", 1), num_warps=NUM_WARPS)
        return c
    kern = matmul_gluon_tf32_cp_kernel if cfg.get("CP_ASYNC") else matmul_gluon_tf32_kernel
    kern[grid](a_desc, b, c, M, N, K, b.stride(0), c.stride(0),
               BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, STAGES=cfg["STAGES"],
               GROUP_M=cfg["GROUP_M"], ROUND=cfg["ROUND"],
               EVEN_K=(K % bk == 0), num_warps=NUM_WARPS)
    return c
