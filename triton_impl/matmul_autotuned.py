"""Autotuned blocked tl.dot matmul: the grouped kernel with tile sizes chosen by measurement,
per precision (fp32-ieee, tf32, fp16, bf16), and a fix for the tutorial's slow TF32.

  idea      the tile (BLOCK_M, BLOCK_N, BLOCK_K), the group size, the warps and the
            pipeline depth (num_stages) decide the speed, and the best choice differs per
            dtype and shape. triton.autotune times every candidate the first time it
            meets a new (M, N, K, dtypes) and keeps the fastest; `best_config(precision)`
            says which one won. Each precision has its own candidates (tiles.AUTOTUNE_CONFIGS).
  change    from matmul_grouped: (1) autotuning; (2) the loads of A and B wrap rows and
            columns around (rows % M, cols % N, as the tutorial does) instead of masking
            them, so only the k tail is masked: the wrapped values land in rows and
            columns of the tile that the store's mask discards; (3) for tf32, an operand
            order that keeps the tensor cores fed (B_FROM_REGISTERS, below).
  tf32      why the tutorial-style kernel ran TF32 at 0.27x cuBLAS while fp16 reached 0.92x.
            On the H100, Triton turns tl.dot into wgmma, which reads B (and usually A) from
            shared memory. wgmma can read an operand "transposed" (MN-major: the M or N
            index contiguous) only for 16-bit types; for TF32 both shared-memory operands
            must be K-major. A row-major B (K x N, N contiguous) is MN-major, so for fp32
            inputs Triton's AccelerateMatmul pass forces a K-major shared layout for B.
            Triton 3.6 still pipelines that load, but the transposition happens inside the
            copy: B arrives by 4-byte cp.async (LDGSTS.E in the SASS, 64 per k-step for a
            32x128 tile, against 16-byte LDGSTS.E.BYPASS.128 for A), with 4-way bank
            conflicts on the scattered writes. Triton still prints its old diagnostic
            ("the pipelined load for this operand will be disabled"); the SASS shows the
            pipeline, and the 4x copy instructions. Measured on the H100 at 4096^3: 81
            TFLOP/s (0.20x cuBLAS) with a row-major B, 233 (0.57x) with a column-major B.
            (Too-deep fp32 configs, e.g. the tutorial's 128x256x64 with 3 stages = 288 KB
            of shared memory, also fail and are skipped.)
            The fix: compute the transposed tile, C^T = B^T @ A^T. Now A^T is the
            shared-memory operand and it is K-major as loaded (A is row-major): it is
            pipelined as usual. B^T is the left operand, which wgmma may take from
            REGISTERS, where no layout rule applies; Triton puts it there when the operand
            is computed rather than loaded, and here it is computed: we round it to TF32
            explicitly (round_to_tf32: to nearest, ties to even; the tensor core would
            otherwise simply drop the 13 low mantissa bits, as it does for the operand it
            reads from shared memory). On the H100 that is one cvt.rn.tf32.f32 per
            element (a single F2FP instruction); the same rounding in integer arithmetic
            costs five, and 11% of triton_persistent's swap speed at 4096^3. The
            accumulator is transposed once, at the store.
            Both orders are candidates; the autotuner keeps the faster: 217 TFLOP/s
            (0.56x, results/h100 of 2026-11-25) for 256x128x32. It stays below the column-major case because the B
            tile still arrives by 4-byte cp.async before it is read into registers, and
            ptxas serialises the wgmmas of that configuration (warning C7515). The fast
            tf32 is triton_persistent (TMA; 0.96x with a column-major B, 0.92-0.94x with
            a row-major one: docs/performance/fast_matmul.md). A column-major B (e.g. x.T
            of a row-major x) is K-major already and needs neither.
  traffic   global loads (what the program's tiles request; only the k tail is masked):
              A: ceil(M/BM)*ceil(N/BN) * BM * K    B: ceil(M/BM)*ceil(N/BN) * BN * K
            (= the grouped kernel's M*K*ceil(N/BN) + N*K*ceil(M/BM) plus the wrapped
            rows and columns of edge tiles); shared: each staged tile read once per
            k-step (a lower bound); stores M*N.
  tuning    a new (M, N, K) costs one compile per candidate plus a short timing each.
            Problems under 2^27 multiply-adds get one candidate (launch overhead, not the
            tile, decides their time), and candidates whose pipeline would not fit in
            shared memory are pruned before compiling. Under the interpreter there is
            one small configuration per precision and nothing is timed.
  precond.  fp32/tf32: float32; fp16/bf16: float16/bfloat16 (output the same dtype);
            any M, N, K >= 0, any strides (no copies); tensors on the current CUDA device.
  run       python -m bench time --kernels triton_autotuned --shapes 4096x4096x4096 --out DIR
            python -m bench check --kernels triton_autotuned --shapes 4096x4096x4096
"""
from __future__ import annotations

import functools

import torch
import triton
import triton.language as tl

from triton_impl import _common, tiles
from triton_impl._common import tile_count    # by name: torch.compile copies it

NAME = "triton_autotuned"
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")

CONFIGS = tiles.AUTOTUNE_CONFIGS          # the candidates, with why they were chosen
INTERPRETER_CONFIG = tiles.INTERPRETER_CONFIG


@triton.jit
def round_to_tf32(x, NATIVE: tl.constexpr):
    """Round float32 to the nearest TF32 (10 mantissa bits), ties to even; NaN stays NaN,
    overflow gives inf. NATIVE (_common.native_tf32_round: sm_90 and newer): PTX
    cvt.rn.tf32.f32, one F2FP.TF32 instruction per element on the H100. Otherwise the same
    rounding in integer arithmetic (five instructions per element): add just under half of
    the 13 dropped bits, plus one if the kept part is odd, then clear them."""
    if NATIVE:
        return tl.inline_asm_elementwise("cvt.rn.tf32.f32 $0, $1;", "=r,r", [x],
                                         dtype=tl.float32, is_pure=True, pack=1)
    else:
        bits = x.to(tl.uint32, bitcast=True)
        odd = (bits >> 13) & 1
        rounded = ((bits + 0xFFF + odd) & 0xFFFFE000).to(tl.float32, bitcast=True)
        return tl.where(x != x, x, rounded)


_COMPILED = tl.constexpr(not _common.interpreting())   # wait_for_dot: inline asm allowed


@triton.jit
def wait_for_dot(acc):
    """acc itself, through an empty inline asm (no instruction). Put right after a tl.dot
    whose left operand comes from registers: a use of the result that is not another dot
    makes Triton wait for the dot's wgmma there (wgmma.wait_group 0). Without it Triton
    3.6 leaves three wgmma in flight across the loop's back-edge while the next k-step
    loads its fragments into the registers they still read: a race (wrong results on the
    H100 with 256x128 tiles; matmul_swap_gluon's header, bench/wgmma_hazards.py). The
    interpreter has no inline asm and no wgmma: there it is acc."""
    if _COMPILED:
        acc = tl.inline_asm_elementwise("", "=r,0", [acc], dtype=tl.float32, is_pure=True,
                                        pack=1)
    return acc


@triton.jit
def matmul_autotuned_kernel(
    a_ptr, b_ptr, c_ptr,                      # pointers: A (M x K), B (K x N), C (M x N)
    M, N, K,                                  # sizes
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,  # strides, in elements
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,  # the tile
    GROUP_M: tl.constexpr,                    # rows of tiles per group of the launch order
    B_FROM_REGISTERS: tl.constexpr,           # tf32 only: compute C^T = B^T A^T (header)
    INPUT_PRECISION: tl.constexpr,            # "ieee" (FFMA) or "tf32"; ignored for 16-bit
    K_WIDE: tl.constexpr,                     # near_int32_limit(K): an int64 k loop
    NATIVE_TF32_ROUND: tl.constexpr,          # round_to_tf32 by cvt.rn.tf32.f32 (sm_90+)
):
    pid = tl.program_id(0)
    num_pid_m = tile_count(M, BLOCK_M)
    num_pid_n = tile_count(N, BLOCK_N)
    pid_m, pid_n = tl.swizzle2d(pid // num_pid_n, pid % num_pid_n, num_pid_m, num_pid_n, GROUP_M)

    # Rows and columns wrap around instead of being masked: every load stays inside A and
    # B, and what the wrapped rows/columns compute is discarded by the store's mask.
    rows = (pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    cols = (pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    ks = tl.arange(0, BLOCK_K)
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
        a = tl.load(a_ptrs, mask=k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None], other=0.0)
        if B_FROM_REGISTERS:
            # C^T += B^T @ A^T: A^T is K-major in shared memory as loaded; B^T is computed
            # (rounded), so the compiler feeds it to wgmma from registers.
            acc = tl.dot(round_to_tf32(tl.trans(b), NATIVE_TF32_ROUND), tl.trans(a), acc,
                         input_precision=INPUT_PRECISION)
            acc = wait_for_dot(acc)         # registers free before the next k-step's loads
        else:
            acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += a_step
        b_ptrs += b_step
    if B_FROM_REGISTERS:
        acc = tl.trans(acc)

    # The store recomputes unwrapped indices: only the tile's part inside C is written.
    out_rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    out_cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + out_rows[:, None] * stride_cm + out_cols[None, :] * stride_cn
    mask = (out_rows[:, None] < M) & (out_cols[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


def smem_bytes(cfg: dict, elem_bytes: int) -> int:
    """Shared memory of the pipeline: num_stages copies of an A tile and a B tile."""
    per_stage = (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * cfg["BLOCK_K"] * elem_bytes
    return cfg["num_stages"] * per_stage


_prune, _bench = _common.tuning_hooks(NAME, smem_bytes)


def _to_config(cfg: dict) -> triton.Config:
    kwargs = {k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages")}
    return triton.Config(kwargs, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])


@functools.lru_cache(maxsize=None)
def kernel_for(precision: str):
    """The autotuned kernel of one precision (built on first use; one per precision, so
    fp32 and tf32, which share a dtype, keep separate caches and winners)."""
    if _common.interpreting():
        configs = [_to_config(INTERPRETER_CONFIG[precision])]
    else:
        configs = [_to_config(c) for c in CONFIGS[precision]]
    return triton.autotune(configs=configs, key=["M", "N", "K"],
                           prune_configs_by={"early_config_prune": _prune},
                           do_bench=_bench)(matmul_autotuned_kernel)


def best_config(precision: str):
    """The configuration the last call at this precision ran with (None before any)."""
    return getattr(kernel_for(precision), "best_config", None)


def matmul(a: torch.Tensor, b: torch.Tensor, precision: str = "fp32") -> torch.Tensor:
    """C = A @ B at the given precision, autotuned (best_config says which candidate won)."""
    return _matmul(a, b, precision)


def _matmul(a: torch.Tensor, b: torch.Tensor, precision: str, *,
            config: dict | None = None) -> torch.Tensor:
    """matmul with a candidate forced, so that tests run every one, including those the
    tuner never picks (the product lets the tuner choose): ``config`` (a CONFIGS entry)
    skips the tuning and runs that candidate."""
    _common.check_precision(NAME, precision, PRECISIONS)
    M, N, K = _common.check_matmul_2d(NAME, a, b, precision)
    trivial = _common.trivial_result(a, M, N, K)
    if trivial is not None:
        return trivial
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    args = (a, b, c, M, N, K,
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    flags = dict(INPUT_PRECISION=_common.DOT_INPUT_PRECISION[precision],
                 NATIVE_TF32_ROUND=_common.native_tf32_round(a.device),
                 K_WIDE=_common.near_int32_limit(K))
    if config is not None:
        grid = (triton.cdiv(M, config["BLOCK_M"]) * triton.cdiv(N, config["BLOCK_N"]),)
        _common.launch(matmul_autotuned_kernel, grid, *args, **flags, **config)
    else:
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
        _common.launch(kernel_for(precision), grid, *args, **flags)
    return c


def _op_impl(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    return matmul(a, b, precision)


def op():
    """torch.ops.cvt_triton.matmul_autotuned(a, b, precision) (registered on first call)."""
    return _common.register_op("matmul_autotuned", _op_impl, derivative="matmul")
