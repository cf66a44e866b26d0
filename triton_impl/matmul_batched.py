"""Batched, broadcasting, strided matmul: (..., m, k) @ (..., k, n) -> (..., m, n), from
the notebook "GPUs and challenges in programming them. Meet Triton".

  idea      torch.matmul's contract for stacks of matrices: the batch dimensions ("...")
            broadcast as in any elementwise op (a (2, 1, m, k) times a (3, k, n) gives
            (2, 3, m, n)), and every operand may be a view (row- or column-major, a slice,
            a broadcast) used as it is, without copies. One launch covers the whole stack:
            program pid takes batch entry pid // tiles and tile pid % tiles of it.
  change    from matmul_grouped: the batch axis. A broadcast batch dimension is a
            dimension of stride 0 (what Tensor.expand produces), so broadcasting costs
            nothing: the kernel adds batch_index * stride and a stride of 0 rereads the
            same matrix. The wrapper first merges batch dimensions that are contiguous in
            A, B and C alike (so a plain (b1, b2, m, k) stack becomes one batch axis) and
            hands the kernel at most 3; more than 3 unmergeable dimensions (rare) are
            split into several launches. The version in "Meet Triton" reshaped A and B
            separately to 3-D and indexed both with the output's batch index: that reads
            out of bounds as soon as both sides broadcast, and its loads were masked on k
            only.
            Inside a matrix the tiles follow the grouped order (tl.swizzle2d) as in
            matmul_grouped.
            Tiles: tf32, fp16 and bf16 are autotuned over matmul_autotuned's candidates
            (tiles.AUTOTUNE_CONFIGS, tuned per (M, N, K, BATCH); 128 x 256 x 64 on 8 warps
            for 16-bit), with its tf32 operand swap (B_FROM_REGISTERS: C^T = B^T A^T, each
            k-step's wgmma retired by wait_for_dot). The 64 x 64 tiles of "Meet Triton" on 4
            warps (tiles.BATCHED) ran 0.43-0.54x the cuBLAS reference in 16-bit and 0.14-0.18x
            in tf32; autotuned, 0.91-1.02x and 0.58-0.68x (4096^3 and a batch of 128,
            docs/performance/fast_matmul.md). fp32 (FFMA) was not measured autotuned and keeps
            tiles.BATCHED.
  TMA       on a Hopper GPU (compute capability 9.x) tf32, fp16 and bf16 run a TMA kernel
            with a batch axis instead of the pointer kernel: tf32 matmul_swap_gluon, the
            Gluon swap of triton_persistent (fragments of B^T loaded between the wgmma
            waits; 0.92-0.94x cuBLAS in 2-D); fp16 and bf16 matmul_persistent's kernel
            (persistent grid, the tile and k loops flattened into one pipeline, so a tile's
            epilogue overlaps the next tile's loads; autotuned per (M, N, K, BATCH) over
            tiles_hopper.PERSISTENT_CONFIGS). Why it matters for a stack of small products:
            the pointer kernel's programs each fill and drain their own pipeline, and at
            K = 1024 that is a sixth of a 128 x 256 tile's time. tma_plan decides: the
            batch dimensions merge as above; the longest merged dimension becomes the
            kernel's batch axis and each entry of the others one launch (at most
            TMA_MAX_LAUNCHES, else the pointer kernel). A and B are described as 3-D
            stacks (batch, rows, cols) whose out-of-bounds zero fill is per dimension: a
            tile past row M or column K never reads the next product (why the stack is not
            flattened to (batch * K, N): 0 * inf = NaN). A broadcast operand (batch stride
            0) is a stack of one read at batch coordinate 0. TMA needs a unit inner stride,
            a 16-byte aligned base and row and batch strides of 16-byte multiples (K and N
            multiples of 4 in contiguous float32 stacks, of 8 in 16-bit ones); at 16 bits a
            column-major B is read as B^T's stack (wgmma takes either major) and C, written
            by TMA stores, must meet the same rule. Anything else (odd K or N in
            contiguous rows, a column-major A, a column-major B at tf32, a slice off 16
            bytes, rows of stride 0) runs the autotuned pointer kernel, without copies:
            staging a row-major copy moves 2 x 4 (M K + K N) bytes per product, ~90 us at
            3 TB/s for 4096^3 against cuBLAS's ~0.35 ms: ~0.73x predicted at tf32, barely
            above the pointer kernel's 0.58-0.68x, and the op promises no copies. Not while
            torch traces (torch.compile records the Triton kernels), nor where a test
            forces a tile or the pointer kernel (_matmul's tile, tma=False). A 2-D
            product gives triton_persistent's bits (the same kernel; at tf32 B rounded to
            TF32 by cvt.rn, A truncated by the tensor core), the same bits in every run.
  traffic   per batch entry, what matmul_grouped requests:
              A: M*K*ceil(N/BLOCK_N)   B: N*K*ceil(M/BLOCK_M)   stores: M*N
            times the number of batch entries of the output. A broadcast operand is read
            once per entry that uses it; L2 usually serves the repeats.
  precond.  fp32/tf32: float32; fp16/bf16: float16/bfloat16 (output the same dtype); both
            operands of rank >= 2 with broadcastable batch dimensions; any strides (speed
            needs one unit stride per matrix); tensors on the current CUDA device.
  run       python -m bench check --kernels triton_batched
            python -m pytest tests/gpu/test_matmul_batched_gluon.py    (GPU: the tf32 path)
            python -m pytest tests/gpu/test_matmul_batched_tma16.py    (GPU: fp16 and bf16)
            python -m pytest tests/cpu/test_batched_tma_plan.py        (CPU: its launches)
            python -c "import torch; from triton_impl import matmul_batched as m; \\
                       a = torch.randn(2, 1, 64, 32, device='cuda'); b = torch.randn(3, 32, 16, device='cuda'); \\
                       print(m.op()(a, b.mT.contiguous().mT, 'fp32').shape)"
"""
from __future__ import annotations

import functools
import itertools
import math

import torch
import triton
import triton.language as tl

from triton_impl import _common, _memory, matmul_persistent, matmul_swap_gluon, tiles
from triton_impl._common import tile_count    # by name: torch.compile copies it
from triton_impl.matmul_autotuned import round_to_tf32, smem_bytes, wait_for_dot

NAME = "triton_batched"
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
KERNEL_BATCH_DIMS = 3
# tf32 through matmul_swap_gluon: its kernel has one batch axis, so a batch that merges
# into d dimensions takes one launch per entry of the other d - 1 (header, "tf32"). Past
# this many launches the host's descriptors and launches would cost more than the faster
# kernel saves on small products: the pointer kernel (one launch) runs instead.
TMA_MAX_LAUNCHES = 32


@triton.jit
def matmul_batched_kernel(
    a_ptr, b_ptr, c_ptr,                      # pointers: A (.., M, K), B (.., K, N), C (.., M, N)
    M, N, K,                                  # sizes of one matrix product
    B1, B2,                                   # sizes of batch dims 1 and 2 (dim 0: the rest)
    off_a, off_b, off_c,                      # element offsets of this launch (outer dims)
    sa0, sa1, sa2, sb0, sb1, sb2, sc0, sc1, sc2,  # batch strides (0 where broadcast)
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,  # matrix strides
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,            # "ieee" (FFMA) or "tf32"; ignored for 16-bit
    K_WIDE: tl.constexpr,                     # near_int32_limit(K): an int64 k loop
    B_FROM_REGISTERS: tl.constexpr = False,   # tf32: C^T = B^T A^T (matmul_autotuned's header)
    NATIVE_TF32_ROUND: tl.constexpr = False,  # round_to_tf32 by cvt.rn.tf32.f32 (sm_90+)
):
    pid = tl.program_id(0)
    num_pid_m = tile_count(M, BLOCK_M)
    num_pid_n = tile_count(N, BLOCK_N)
    tiles = num_pid_m * num_pid_n             # i32 ok: below the grid size (< 2^31)
    batch = pid // tiles                       # which matrix product of the stack
    tile = pid % tiles                         # which tile of it, in grouped order
    pid_m, pid_n = tl.swizzle2d(tile // num_pid_n, tile % num_pid_n, num_pid_m, num_pid_n, GROUP_M)

    # Batch index -> (b0, b1, b2) -> element offsets, in int64 (a stack passes 2^31 fast).
    batch = batch.to(tl.int64)
    b2 = batch % B2
    b1 = (batch // B2) % B1
    b0 = batch // (B2 * B1)                   # i32 ok: B2 * B1 <= batches < 2^31
    a_ptr += off_a + b0 * sa0 + b1 * sa1 + b2 * sa2   # stride 0 rereads a broadcast matrix
    b_ptr += off_b + b0 * sb0 + b1 * sb1 + b2 * sb2
    c_ptr += off_c + b0 * sc0 + b1 * sc1 + b2 * sc2

    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    row_ok = rows < M
    col_ok = cols < N
    # Offsets in int64: ks * stride_bk and the k-step BLOCK_K * stride_bk pass 2^31 for a
    # wide B (N > 2^31 / BLOCK_K); tl.cast, because a stride of 1 arrives as a constexpr.
    k64 = ks.to(tl.int64)
    a_ptrs = a_ptr + rows[:, None] * stride_am + k64[None, :] * stride_ak
    b_ptrs = b_ptr + k64[:, None] * stride_bk + cols[None, :] * stride_bn
    a_step = BLOCK_K * tl.cast(stride_ak, tl.int64)
    b_step = BLOCK_K * tl.cast(stride_bk, tl.int64)

    if B_FROM_REGISTERS:
        acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)    # the transposed tile
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    stop = K
    if K_WIDE:                                # K within a tile of 2^31: an int64 bound
        stop = tl.cast(K, tl.int64)           # gives the loop an int64 counter
    for k0 in range(0, stop, BLOCK_K):        # i32 ok: K + BLOCK_K < 2^31 unless K_WIDE
        k_ok = (k0 + ks) < K
        a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        if B_FROM_REGISTERS:
            # C^T += B^T @ A^T, B^T rounded (computed: fed to wgmma from registers), and the
            # k-step's wgmma retired before the next k-step's fragments load (wait_for_dot)
            acc = tl.dot(round_to_tf32(tl.trans(b), NATIVE_TF32_ROUND), tl.trans(a), acc,
                         input_precision=INPUT_PRECISION)
            acc = wait_for_dot(acc)
        else:
            acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += a_step
        b_ptrs += b_step
    if B_FROM_REGISTERS:
        acc = tl.trans(acc)

    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=row_ok[:, None] & col_ok[None, :])


def merge_batch_dims(sizes, *strides):
    """Batch dimensions as few as possible: drops size-1 dimensions and merges a dimension
    into the next one when, in every tensor, stepping it equals stepping the next one
    `size` times (stride[i] == stride[i+1] * size[i+1]; two broadcast dims, stride 0,
    merge too). Returns [(size, (stride of each tensor, ...)), ...], outermost first."""
    merged: list[tuple[int, tuple[int, ...]]] = []
    for i, size in enumerate(sizes):
        if size == 1:
            continue
        st = tuple(s[i] for s in strides)
        if merged:
            prev_size, prev_st = merged[-1]
            if all(p == s * size for p, s in zip(prev_st, st)):
                merged[-1] = (prev_size * size, st)
                continue
        merged.append((size, st))
    return merged


def _check(a, b, precision):
    _common.check_precision(NAME, precision, PRECISIONS)
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise TypeError(f"{NAME}: A and B must be torch.Tensors, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    if a.dim() < 2 or b.dim() < 2:
        raise ValueError(f"{NAME}: A and B must have at least 2 dimensions (..., m, k) and "
                         f"(..., k, n), got {a.dim()}-D and {b.dim()}-D tensors")
    _common.check_dtype(NAME, a, b, precision)
    _common.check_device(NAME, a, b)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"{NAME}: inner dimensions must agree, got A {tuple(a.shape)} and "
                         f"B {tuple(b.shape)}")
    try:
        return torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except RuntimeError:
        raise ValueError(f"{NAME}: batch dimensions must broadcast, got A {tuple(a.shape)} and "
                         f"B {tuple(b.shape)}") from None


# The precisions whose tiles are autotuned (tuned_kernel); fp32 runs the fixed tiles.BATCHED.
AUTOTUNED = tiles.BATCHED_AUTOTUNED


def params(precision: str = "fp32") -> dict[str, int]:
    """The fixed tiles of fp32, the 64 x 64 tiles of "Meet Triton" (tiles.BATCHED); the
    other precisions' first autotuning candidate (what small problems run)."""
    if precision in AUTOTUNED:
        return dict(tiles.AUTOTUNE_CONFIGS[precision][0])
    return dict(tiles.BATCHED[precision])


def _to_config(cfg: dict) -> triton.Config:
    kwargs = {k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages")}
    return triton.Config(kwargs, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])


@functools.lru_cache(maxsize=None)
def tuned_kernel(precision: str):
    """matmul_batched_kernel autotuned over tiles.AUTOTUNE_CONFIGS[precision] (one small
    configuration under the interpreter), one tuner per precision."""
    if _common.interpreting():
        configs = [_to_config(tiles.INTERPRETER_CONFIG[precision])]
    else:
        configs = [_to_config(c) for c in tiles.AUTOTUNE_CONFIGS[precision]]
    prune, bench = _common.tuning_hooks(NAME, smem_bytes)      # prunes by the whole stack
    return triton.autotune(configs=configs, key=["M", "N", "K", "BATCH"],
                           prune_configs_by={"early_config_prune": prune},
                           do_bench=bench)(_tunable_kernel)


@triton.jit
def _tunable_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, BATCH, B1, B2, off_a, off_b, off_c,
    sa0, sa1, sa2, sb0, sb1, sb2, sc0, sc1, sc2,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, INPUT_PRECISION: tl.constexpr, K_WIDE: tl.constexpr,
    B_FROM_REGISTERS: tl.constexpr, NATIVE_TF32_ROUND: tl.constexpr,
):
    """matmul_batched_kernel with BATCH (the number of matrix products of the launch) as
    an argument, for the tuner's key; BATCH itself is not used."""
    matmul_batched_kernel(a_ptr, b_ptr, c_ptr, M, N, K, B1, B2, off_a, off_b, off_c,
                          sa0, sa1, sa2, sb0, sb1, sb2, sc0, sc1, sc2,
                          stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                          BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, INPUT_PRECISION, K_WIDE,
                          B_FROM_REGISTERS, NATIVE_TF32_ROUND)


def best_config(precision: str):
    """The configuration the last autotuned call at this precision ran with (None before)."""
    return getattr(tuned_kernel(precision), "best_config", None)


def _stack(t: torch.Tensor, offset: int, size: int, stride: int) -> torch.Tensor:
    """The 3-D view (size, rows, cols) of a stack t (..., rows, cols) that starts `offset`
    elements into it and steps `stride` per entry."""
    return t.as_strided((size, t.shape[-2], t.shape[-1]), (stride, t.stride(-2), t.stride(-1)),
                        t.storage_offset() + offset)


def _tma_kernel_runs(precision: str, device: torch.device) -> bool:
    """True where a TMA kernel serves this precision: tf32 matmul_swap_gluon (Hopper, not
    the interpreter), fp16/bf16 matmul_persistent's kernel (compute capability 9.x, or the
    interpreter, which emulates descriptors)."""
    if precision == "tf32":
        return matmul_swap_gluon.available(device)
    if precision in ("fp16", "bf16"):
        return _common.interpreting() or matmul_swap_gluon.available(device)   # Hopper
    return False


def tma_plan(a: torch.Tensor, b: torch.Tensor, precision: str, tile: dict | None = None):
    """The launches of the TMA kernels for (..., M, K) @ (..., K, N), or None where the
    pointer kernel runs (header, "TMA"). A launch is (A stack, B stack, C offset, C batch
    stride, b_k_major): 3-D views of the broadcast operands (a broadcast batch has stride
    0), where its products lie in a contiguous C, and whether B's stack is given as B^T's
    (each matrix column-major: matmul_persistent's K-major path)."""
    if (tile is not None or _common.tracing((a, b))
            or not _tma_kernel_runs(precision, a.device)):
        return None
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    if min(M, N, K) == 0 or 0 in batch:
        return None                                   # no product to compute
    a = a.expand(*batch, M, K)
    b = b.expand(*batch, K, N)
    nb = len(batch)
    c = torch.empty((*batch, M, N), device="meta", dtype=a.dtype)     # the output's layout
    dims = (merge_batch_dims(batch, a.stride()[:nb], b.stride()[:nb], c.stride()[:nb])
            or [(1, (0, 0, 0))])
    # the kernel's batch axis: the longest merged dimension; a launch per entry of the others
    axis = max(range(len(dims)), key=lambda i: dims[i][0])
    size, (sa, sb, sc) = dims[axis]
    outer = dims[:axis] + dims[axis + 1:]
    # the persistent kernel counts tiles x products in int32 (tiles of at least 32 x 32)
    if (math.prod(d[0] for d in outer) > TMA_MAX_LAUNCHES
            or size * triton.cdiv(M, 32) * triton.cdiv(N, 32) >= 2**31):
        return None
    launches = []
    for index in itertools.product(*(range(d[0]) for d in outer)):
        offs = [sum(i * d[1][t] for i, d in zip(index, outer)) for t in range(3)]
        a3, b3 = _stack(a, offs[0], size, sa), _stack(b, offs[1], size, sb)
        if not _memory.tma_compatible(a3):
            return None
        if precision == "tf32":        # matmul_swap_gluon: B row-major, C by pointer stores
            if not _memory.tma_compatible(b3):
                return None
            launches.append((a3, b3, offs[2], sc, False))
            continue
        # matmul_persistent: B row-major or column-major; C written by TMA stores
        if not _memory.tma_compatible(_stack(c, offs[2], size, sc)):
            return None
        if _memory.tma_compatible(b3):
            launches.append((a3, b3, offs[2], sc, False))
        elif _memory.tma_compatible(b3.mT):
            launches.append((a3, b3.mT, offs[2], sc, True))
        else:
            return None
    return launches


def matmul(a: torch.Tensor, b: torch.Tensor, precision: str = "fp32") -> torch.Tensor:
    """(..., M, K) @ (..., K, N) -> (..., M, N) at the given precision, without copies:
    tf32, fp16 and bf16 run a TMA kernel where tma_plan allows, else they are autotuned
    (AUTOTUNED), and fp32 runs tiles.BATCHED."""
    return _matmul(a, b, precision)


def _matmul(a: torch.Tensor, b: torch.Tensor, precision: str, *,
            tile: dict | None = None, tma: bool = True) -> torch.Tensor:
    """matmul with a tile or the pointer kernel forced, so that tests cross every tile
    edge on small shapes and compare the two kernels (the product takes the defaults):
    ``tile`` fixes the tile parameters (tiles.BATCHED's keys, B_FROM_REGISTERS for tf32)
    and runs the pointer kernel; ``tma=False`` runs the pointer kernel where tma_plan
    would take a TMA kernel."""
    batch = _check(a, b, precision)
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    if K == 0:
        return torch.zeros((*batch, M, N), dtype=a.dtype, device=a.device)   # empty sums
    c = torch.empty((*batch, M, N), dtype=a.dtype, device=a.device)
    if c.numel() == 0:
        return c
    plan = tma_plan(a, b, precision, tile) if tma else None
    if plan is not None:
        for a3, b3, c_off, c_stride, b_k_major in plan:
            c3 = _stack(c, c_off, a3.shape[0], c_stride)
            if precision == "tf32":
                matmul_swap_gluon.launch(a3, b3, c3)
            else:
                matmul_persistent.launch(a3, b3, c3, precision, b_k_major=b_k_major)
        return c
    autotuned = tile is None and precision in AUTOTUNED
    p = tile or params(precision)            # (unused when autotuned)
    a = a.expand(*batch, M, K)               # views: broadcast dimensions get stride 0
    b = b.expand(*batch, K, N)
    nb = len(batch)
    dims = merge_batch_dims(batch, a.stride()[:nb], b.stride()[:nb], c.stride()[:nb])
    inner = dims[-KERNEL_BATCH_DIMS:]        # the kernel's 3 batch dimensions ...
    outer = dims[:-KERNEL_BATCH_DIMS]        # ... and a loop of launches for any others
    inner = [(1, (0, 0, 0))] * (KERNEL_BATCH_DIMS - len(inner)) + inner
    sizes = [d[0] for d in inner]
    sa, sb, sc = ([d[1][t] for d in inner] for t in range(3))
    batches = sizes[0] * sizes[1] * sizes[2]
    strides = (a.stride(-2), a.stride(-1), b.stride(-2), b.stride(-1), c.stride(-2), c.stride(-1))
    flags = dict(INPUT_PRECISION=_common.DOT_INPUT_PRECISION[precision],
                 K_WIDE=_common.near_int32_limit(K),
                 NATIVE_TF32_ROUND=_common.native_tf32_round(a.device))
    for index in itertools.product(*(range(d[0]) for d in outer)):
        # Rare: more than 3 batch dims; the outer ones' offsets, one launch each.
        offs = [sum(i * d[1][t] for i, d in zip(index, outer)) for t in range(3)]
        if autotuned:
            grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])
                                 * batches,)
            _common.launch(tuned_kernel(precision), grid,
                           a, b, c, M, N, K, batches, sizes[1], sizes[2], *offs, *sa, *sb, *sc,
                           *strides, **flags)
            continue
        grid = (triton.cdiv(M, p["BLOCK_M"]) * triton.cdiv(N, p["BLOCK_N"]) * batches,)
        _common.launch(matmul_batched_kernel, grid,
                       a, b, c, M, N, K, sizes[1], sizes[2], *offs, *sa, *sb, *sc, *strides,
                       BLOCK_M=p["BLOCK_M"], BLOCK_N=p["BLOCK_N"], BLOCK_K=p["BLOCK_K"],
                       GROUP_M=p["GROUP_M"], B_FROM_REGISTERS=p.get("B_FROM_REGISTERS", False),
                       **flags,
                       num_warps=p.get("num_warps", 4), num_stages=p.get("num_stages", 3))
    return c


def _op_impl(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    return matmul(a, b, precision)


def op():
    """torch.ops.cvt_triton.matmul_batched(a, b, precision) (registered on first call)."""
    return _common.register_op("matmul_batched", _op_impl, derivative="batched_matmul")
