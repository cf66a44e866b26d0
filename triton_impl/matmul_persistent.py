"""Persistent TMA matmul for Hopper: tensor descriptors, one program per SM, tf32 without
the transposing copy.

  idea      three Hopper features the tutorial kernel (matmul_autotuned) does not use:
            (1) TMA. A tensor descriptor (tl.make_tensor_descriptor: base, shape, strides,
            box = the tile) lets one thread ask the copy engine for a whole tile; the tile
            lands in shared memory already swizzled for wgmma, and completion is signalled
            on an mbarrier. No per-thread address arithmetic, no masks: the engine clips
            at the tensor's edges and fills what lies outside with zeros, so the last
            (partial) tiles in M, N and K need no special code.
            (2) a persistent grid. min(#SMs, #tiles) programs; program p computes tiles
            p, p + #SMs, p + 2 #SMs, ... (in the grouped order of matmul_grouped). With
            FLATTEN the tile loop and the k loop become one software-pipelined loop, so
            the loads of the next tile start while the current one finishes: no pipeline
            drain and refill between tiles, and the epilogue (the C store) overlaps loads.
            (3) optional warp specialisation (WARP_SPECIALIZE, Triton 3.6's Hopper pass,
            num_warps=4 only): one warpgroup only issues TMA loads, two warpgroups only
            compute, each on half the tile; it needs the unflattened loop.
  tf32      wgmma reads a 32-bit operand from shared memory only K-major (the k index
            contiguous); a row-major B (K x N) is N-major. With pointer loads, Triton 3.6
            scatters such a B 4 bytes at a time into a K-major buffer (cp.async of 4
            bytes; in the SASS: LDGSTS.E instead of LDGSTS.E.BYPASS.128): 4x the copy
            instructions, and bank conflicts. TMA cannot transpose at all: with a plain
            TMA load the N-major tile is copied into a K-major buffer through registers at
            every k-step (measured at 0.20x cuBLAS: docs/performance/fast_matmul.md). The
            ways out (tests force either through _matmul's tf32_row_major_b):
              gluon     (default on the H100) matmul_swap_gluon: the swap below, written
                        in Gluon so that every wgmma wait and fragment load sits where
                        the register operand needs it; 0.92-0.94x cuBLAS.
              swap      compute the transposed tile, C^T = B^T A^T. A^T is K-major as
                        loaded (A is row-major), so it is wgmma's shared-memory operand;
                        B^T is the left operand, which wgmma may take from REGISTERS,
                        where no layout rule applies. The B tile arrives by TMA in its
                        natural N-major layout, each thread reads its fragment with plain
                        32-bit shared loads, rounds it to TF32 (round_to_tf32: to
                        nearest, ties to even, one cvt.rn.tf32.f32 per element; this also
                        makes it a computed value, which is what puts it in registers),
                        and the accumulator is transposed once, in the epilogue. This is
                        what CUTLASS does for tf32 with an MN-major operand. A (read by
                        wgmma from shared memory) is truncated to TF32 by the tensor core.
                        wait_for_dot retires each k-step's wgmma before the next k-step
                        loads its fragments: without it Triton 3.6 lets those loads
                        overwrite registers that in-flight wgmma still read (a race,
                        matmul_swap_gluon's header), and with it the tensor core idles
                        while they load (0.65x). Where Gluon does not run (the
                        interpreter, other GPUs, while torch traces) this is the default.
            (Writing B^T once before the product, one more pass over B, measured ~0.69x.)
            A column-major B (e.g. x.T) is K-major already and needs none of them.
  change    from matmul_autotuned: TMA descriptors instead of pointer tiles, a persistent
            grid instead of one program per tile, the tf32 paths above, and an epilogue
            that stores C through TMA (optionally in two halves, EPILOGUE_SPLIT=2, which
            halves the staging buffer so the pipeline can take another stage).
  batch     the kernel multiplies a stack (launch()): the persistent loop runs over
            BATCH x tiles, tile t of product t // tiles. For a stack of several products
            (BATCHED) A, B and C are 3-D descriptors (batch, rows, cols) loaded and stored
            in boxes of one matrix's tile, which in shared memory are the 2-D tile's bytes
            (the reshapes are free: same wgmma, TMA and shared memory in the compiled
            kernel). The zero fill is per dimension, so a k-tail reads zeros, never the
            next product. A broadcast operand is a stack of one (step 0). A single product
            (matmul(), a stack of one) keeps 2-D descriptors: Triton 3.6's warp
            specialisation does not compile the reshaped 3-D boxes, so stacks tune over the
            candidates without it (tiles_hopper, "-stack"). triton_batched runs its fp16
            and bf16 stacks here (matmul_batched.tma_plan).
  traffic   global loads as the blocked kernels: A M*K*ceil(N/BN), B N*K*ceil(M/BM)
            elements (TMA fetches nothing outside the tensor, as masked loads request
            nothing); stores M*N.
  measured  H100, 4096^3, against cuBLAS at the same precision (docs/performance/
            fast_matmul.md has the method and every variant tried): tf32 with a row-major B
            by gluon 0.92-0.94x by four timing methods (results/sweeps/h100, 2026-11-25),
            by swap 0.65x (0.82x before wait_for_dot, racing; 2026-11-22); tf32 with a
            column-major B 0.96x (128x256x32, split epilogue; 2026-11-22); fp16 0.97x,
            bf16 0.96x (results/h100, 2026-11-25).
            Which path runs is decided by B's layout alone: a column-major B (B.stride(0)
            == 1, e.g. x.T, a view, no copy) takes the K-major path; a row-major B in tf32
            takes DEFAULT_TF32_ROW_MAJOR_B ("gluon"; "swap" where Gluon does not run, or
            when a test gives a config for this file's kernel: _matmul).
  precond.  tf32, fp16, bf16 (fp32-ieee is matmul_autotuned's: the FFMA dot from a
            TMA-swizzled tile spills registers). Any M, N, K >= 0.
            TMA needs 16-byte aligned base pointers and row strides and a unit inner
            stride; an operand that has none of the two supported layouts or is not
            aligned (say K = 13 in fp32: 52-byte rows) is first copied into a buffer
            with padded rows, inside the op (plan() says which copies it makes); C
            likewise: when N * bytes is not a multiple of 16 the kernel writes a padded
            buffer and the op copies it into the contiguous result. At aligned row- or
            column-major inputs there is no copy. Tensors on the current CUDA device
            (or the CPU under TRITON_INTERPRET=1: the interpreter emulates descriptors).
  run       python -m bench time --kernels triton_persistent --shapes 4096x4096x4096 --out DIR
            python -m pytest tests/interpreter/test_matmul_persistent.py     (CPU: interpreter)
"""
from __future__ import annotations

import functools

import torch
import triton
import triton.language as tl

from triton_impl import _common, _memory, matmul_swap_gluon, tiles_hopper
from triton_impl._common import tile_count    # by name: torch.compile copies it
from triton_impl.matmul_autotuned import round_to_tf32, wait_for_dot

NAME = "triton_persistent"
PRECISIONS = ("tf32", "fp16", "bf16")
# tf32 with a row-major B: "gluon" or "swap" (header).
TF32_ROW_MAJOR_B = ("gluon", "swap")
DEFAULT_TF32_ROW_MAJOR_B = "gluon"

CONFIGS = tiles_hopper.PERSISTENT_CONFIGS
INTERPRETER_CONFIG = tiles_hopper.PERSISTENT_INTERPRETER_CONFIG


@triton.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """The grouped order of matmul_grouped (tl.swizzle2d), for a tile index."""
    return tl.swizzle2d(tile_id // num_pid_n, tile_id % num_pid_n, num_pid_m, num_pid_n, GROUP_M)


@triton.jit
def _descriptor(ptr, batches, rows, cols, stride_batch, stride_row, BLOCK_R: tl.constexpr,
                BLOCK_C: tl.constexpr, BATCHED: tl.constexpr):
    """A descriptor of a matrix (rows x cols, unit inner stride) read in BLOCK_R x BLOCK_C
    boxes, or with BATCHED of a stack (batches x rows x cols) read in boxes of one matrix's
    tile (1 x BLOCK_R x BLOCK_C: in shared memory the 2-D tile's bytes)."""
    if BATCHED:
        return tl.make_tensor_descriptor(ptr, shape=[batches, rows, cols],
                                         strides=[stride_batch, stride_row, 1],
                                         block_shape=[1, BLOCK_R, BLOCK_C])
    else:
        return tl.make_tensor_descriptor(ptr, shape=[rows, cols], strides=[stride_row, 1],
                                         block_shape=[BLOCK_R, BLOCK_C])


@triton.jit
def _load(desc, batch, row, col, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
          BATCHED: tl.constexpr):
    """The BLOCK_R x BLOCK_C tile at (row, col): of stack entry `batch` with BATCHED, else
    of the one matrix."""
    if BATCHED:
        return desc.load([batch, row, col]).reshape(BLOCK_R, BLOCK_C)    # free: same bytes
    else:
        return desc.load([row, col])


@triton.jit
def _store(desc, batch, row, col, tile, BATCHED: tl.constexpr):
    """`tile` stored at (row, col) of stack entry `batch` (BATCHED), else of the matrix."""
    if BATCHED:
        desc.store([batch, row, col], tile.reshape(1, tile.shape[0], tile.shape[1]))
    else:
        desc.store([row, col], tile)


@triton.jit
def matmul_persistent_kernel(
    a_ptr, b_ptr, c_ptr,                  # A (M x K), B (K x N, or B^T as N x K), C (M x N):
                                          # each a stack of BATCH matrices (batch, rows, cols)
    M, N, K,                              # sizes of one product
    BATCH,                                # products (1: a 2-D matmul)
    stride_am, stride_b, stride_cm,       # row strides in elements (the inner stride is 1)
    stride_ab, stride_bb, stride_cb,      # batch strides in elements
    step_a, step_b,                       # batch coordinate per product: 1, or 0 (broadcast)
    BATCHED: tl.constexpr,                # 3-D descriptors (BATCH > 1; header, "batch")
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,  # the tile
    GROUP_M: tl.constexpr,                # rows of tiles per group of the tile order
    NUM_PROGRAMS: tl.constexpr,           # the persistent grid's size (= SMs)
    B_K_MAJOR: tl.constexpr,              # b_ptr holds B^T, N x K (K contiguous)
    SWAP_AB: tl.constexpr,                # tf32, row-major B: C^T = B^T A^T (header)
    EPILOGUE_SPLIT: tl.constexpr,         # 1: one TMA store per tile; 2: two halves
    TMA_STORE: tl.constexpr,              # False: masked tl.store (no staging buffer)
    WARP_SPECIALIZE: tl.constexpr, FLATTEN: tl.constexpr,  # loop schedule (header)
    INPUT_PRECISION: tl.constexpr,        # "tf32" (ignored for 16-bit inputs)
    NATIVE_TF32_ROUND: tl.constexpr,      # SWAP_AB: round_to_tf32 by cvt.rn.tf32.f32 (sm_90+)
):
    start = tl.program_id(0)
    num_pid_m = tile_count(M, BLOCK_M)
    num_pid_n = tile_count(N, BLOCK_N)
    k_tiles = tile_count(K, BLOCK_K)
    tiles = num_pid_m * num_pid_n         # of one product
    # The wrapper keeps BATCH x tiles below 2^31 (matmul_batched.tma_plan), so the tile
    # loop's counter below stays in int32.
    num_tiles = tiles * BATCH

    # Descriptors: built once per program (in global scratch, see _allocator), used by
    # every tile. Loads outside [0, M) x [0, K) etc. come back as zeros; for a stack
    # (BATCHED) per dimension: a tile past row M or column K of product i reads zeros, never
    # product i + 1. A broadcast operand is a stack of one (step 0).
    a_desc = _descriptor(a_ptr, tl.maximum(BATCH * step_a, 1), M, K, stride_ab, stride_am,
                         BLOCK_M, BLOCK_K, BATCHED)
    b_batches = tl.maximum(BATCH * step_b, 1)
    if B_K_MAJOR:
        b_desc = _descriptor(b_ptr, b_batches, N, K, stride_bb, stride_b, BLOCK_N, BLOCK_K,
                             BATCHED)
    else:
        b_desc = _descriptor(b_ptr, b_batches, K, N, stride_bb, stride_b, BLOCK_K, BLOCK_N,
                             BATCHED)
    c_desc = _descriptor(c_ptr, BATCH, M, N, stride_cb, stride_cm, BLOCK_M,
                         BLOCK_N // EPILOGUE_SPLIT, BATCHED)

    # The epilogue finds its tile from its own counter. With FLATTEN the compiler
    # pipelines across tile boundaries (the next tile's loads start before this tile's
    # store), so the store must not read the tile index the load stage has moved on.
    tile_c = start - NUM_PROGRAMS
    for tile_id in tl.range(start, num_tiles, NUM_PROGRAMS, flatten=FLATTEN,
                            warp_specialize=WARP_SPECIALIZE):  # i32 ok: see num_tiles
        batch = 0
        tile = tile_id
        if BATCHED:
            batch = tile_id // tiles                                 # which product
            tile = tile_id % tiles
        pid_m, pid_n = _tile_coords(tile, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        if SWAP_AB:
            acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)    # the transposed tile
        else:
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            off_k = ki * BLOCK_K
            a = _load(a_desc, batch * step_a, off_m, off_k, BLOCK_M, BLOCK_K, BATCHED)  # K-major
            if B_K_MAJOR:
                b = _load(b_desc, batch * step_b, off_n, off_k, BLOCK_N, BLOCK_K, BATCHED)
                acc = tl.dot(a, b.T, acc, input_precision=INPUT_PRECISION)
            elif SWAP_AB:
                b = _load(b_desc, batch * step_b, off_k, off_n, BLOCK_K, BLOCK_N, BATCHED)
                # C^T += B^T A^T: B^T (computed: rounded) from registers, A^T from shared
                acc = tl.dot(round_to_tf32(b.T, NATIVE_TF32_ROUND), a.T, acc,
                             input_precision=INPUT_PRECISION)
                acc = wait_for_dot(acc)     # registers free before the next k-step's loads
            else:
                # BK x BN, N-major: wgmma reads it so for 16-bit types (tf32 never comes
                # here: a row-major B takes SWAP_AB, a column-major one B_K_MAJOR)
                b = _load(b_desc, batch * step_b, off_k, off_n, BLOCK_K, BLOCK_N, BATCHED)
                acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)

        tile_c += NUM_PROGRAMS
        batch_c = 0
        tile = tile_c
        if BATCHED:
            batch_c = tile_c // tiles
            tile = tile_c % tiles
        pid_m, pid_n = _tile_coords(tile, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        if SWAP_AB:
            acc = acc.T
        if TMA_STORE:
            if EPILOGUE_SPLIT == 2:
                # two BM x BN/2 halves: half the staging buffer in shared memory
                halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
                left, right = tl.split(halves)
                _store(c_desc, batch_c, off_m, off_n, left.to(c_ptr.dtype.element_ty), BATCHED)
                _store(c_desc, batch_c, off_m, off_n + BLOCK_N // 2,
                       right.to(c_ptr.dtype.element_ty), BATCHED)
            else:
                _store(c_desc, batch_c, off_m, off_n, acc.to(c_ptr.dtype.element_ty), BATCHED)
        else:
            rows = off_m.to(tl.int64) + tl.arange(0, BLOCK_M)    # int64: off_m + BLOCK_M can
            cols = off_n.to(tl.int64) + tl.arange(0, BLOCK_N)    # pass 2^31 for M near it
            c_ptrs = (c_ptr + batch_c.to(tl.int64) * stride_cb   # a stack passes 2^31 fast
                      + rows[:, None] * stride_cm + cols[None, :])
            tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
                     mask=(rows[:, None] < M) & (cols[None, :] < N))


# --------------------------------------------------------------------------- host side

def _tma_rows_ok(t: torch.Tensor, row_dim: int) -> bool:
    """True if `t` can be described to TMA with rows along `row_dim`: the other dim is
    contiguous, the row stride is a multiple of 16 bytes, the base 16-byte aligned."""
    inner = 1 - row_dim
    e = t.element_size()
    return (t.stride(inner) == 1 and (t.stride(row_dim) * e) % 16 == 0
            and _memory.aligned16(t))              # never a fake tensor's address


def _staged_row_major(x: torch.Tensor) -> torch.Tensor:
    """A row-major copy of x with 16-byte aligned rows (a view of a padded buffer, its
    padding zeroed: whatever reads past a row sees zeros, never stale memory)."""
    rows, cols = x.shape
    buf = torch.zeros((rows, _memory.padded16(cols, x.element_size())), dtype=x.dtype,
                      device=x.device)
    view = buf[:, :cols]
    view.copy_(x)
    return view


_scratch: dict = {}


def _allocator(size: int, alignment: int, stream):
    """Global scratch for the descriptors that tl.make_tensor_descriptor builds on the
    device (128 bytes each per program); Triton asks for it at every launch. Zero-filled
    once and kept per (device, stream, size): building a descriptor reads its slot before
    every byte of it is written (compute-sanitizer's initcheck flagged fresh torch.empty
    memory at 264x520x136), and launches on one stream run one after the other, so one
    buffer per stream serves them all without a memset per launch."""
    key = (torch.cuda.current_device(), stream, size)
    if key not in _scratch:
        _scratch[key] = torch.zeros(size, dtype=torch.int8, device="cuda")
    return _scratch[key]


def num_programs(device) -> int:
    """The persistent grid: one program per SM (_common.INTERPRETER_SM_COUNT = 4 under the
    interpreter)."""
    return _common.sm_count(device)


def tf32_mode(a: torch.Tensor, b: torch.Tensor, tf32_row_major_b: str | None = None,
              config: dict | None = None) -> str:
    """The row-major-B path of a tf32 call: the one asked for, else the default. "gluon"
    becomes "swap" where matmul_swap_gluon does not run (no Hopper GPU, the interpreter),
    while torch traces (torch.compile and the op's fake-tensor checks record Triton
    kernels, not Gluon ones) and when a config of this file's kernel is given."""
    mode = tf32_row_major_b or DEFAULT_TF32_ROW_MAJOR_B
    if mode == "gluon" and (config is not None or _common.tracing((a, b))
                            or not matmul_swap_gluon.available(a.device)):
        return "swap"
    return mode


def plan(a: torch.Tensor, b: torch.Tensor, precision: str, tf32_row_major_b: str | None = None):
    """How the operands will be fed to TMA. Returns (a_use, b_use, b_k_major, swap_ab,
    notes): a_use is A with TMA-compatible rows, b_use is B (K x N) or B^T (N x K)
    likewise, notes lists the copies made (empty at aligned row- or column-major
    inputs)."""
    notes = []
    if _tma_rows_ok(a, 0):
        a_use = a
    else:
        a_use = _staged_row_major(a)
        notes.append("A copied to 16-byte aligned rows")
    if _tma_rows_ok(b, 1):                   # column-major B: B^T has aligned rows
        return a_use, b.T, True, False, notes
    if _tma_rows_ok(b, 0):
        b_rows = b
    else:
        b_rows = _staged_row_major(b)
        notes.append("B copied to 16-byte aligned rows")
    if precision != "tf32":
        return a_use, b_rows, False, False, notes   # 16-bit: wgmma reads N-major B
    mode = tf32_row_major_b or DEFAULT_TF32_ROW_MAJOR_B
    if mode not in TF32_ROW_MAJOR_B:
        raise ValueError(f"{NAME}: tf32_row_major_b must be one of {TF32_ROW_MAJOR_B}, "
                         f"got {mode!r}")
    return a_use, b_rows, False, True, notes


_prune, _bench = _common.tuning_hooks(NAME, tiles_hopper.persistent_smem_bytes)


LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def _to_config(cfg: dict) -> triton.Config:
    kwargs = {k: v for k, v in cfg.items() if k not in LAUNCH_OPTIONS}
    return triton.Config(kwargs, **{k: v for k, v in cfg.items() if k in LAUNCH_OPTIONS})


def candidates_key(precision: str, swap_ab: bool = False, stack: bool = False) -> str:
    """Which candidate list (tiles_hopper.PERSISTENT_CONFIGS) a call uses: the precision,
    or "tf32-swap" for tf32 with a row-major B computed as C^T = B^T A^T; "-stack" added for
    a stack of several products (no warp specialisation)."""
    return ("tf32-swap" if swap_ab else precision) + ("-stack" if stack else "")


@functools.lru_cache(maxsize=None)
def kernel_for(key: str):
    """The autotuned kernel of one candidate list (candidates_key). The tuning key includes
    the operand layout (B_K_MAJOR, SWAP_AB) and the number of products (BATCH): each has
    its own winner."""
    if _common.interpreting():
        configs = [_to_config(INTERPRETER_CONFIG[key])]
    else:
        configs = [_to_config(c) for c in CONFIGS[key]]
    return triton.autotune(configs=configs, key=["M", "N", "K", "BATCH", "B_K_MAJOR", "SWAP_AB"],
                           prune_configs_by={"early_config_prune": _prune},
                           do_bench=_bench)(matmul_persistent_kernel)


@functools.lru_cache(maxsize=None)
def _fixed_kernel(items: tuple):
    """One configuration with launch options a direct launch refuses (num_ctas, maxnreg:
    Triton takes them only from a triton.Config): an autotuner with a single candidate,
    which launches it without timing anything."""
    return triton.autotune(configs=[_to_config(dict(items))], key=[])(matmul_persistent_kernel)


def best_config(key: str):
    """The configuration the last tuned call with this candidate list (a precision, or
    "tf32-swap") ran with (None before)."""
    return getattr(kernel_for(key), "best_config", None)


def matmul(a: torch.Tensor, b: torch.Tensor, precision: str = "fp16") -> torch.Tensor:
    """C = A @ B at the given precision: the candidate the tuner picks (best_config), and
    for tf32 with a row-major B the path tf32_mode picks (header)."""
    return _matmul(a, b, precision)


def _matmul(a: torch.Tensor, b: torch.Tensor, precision: str, *,
            config: dict | None = None, tf32_row_major_b: str | None = None) -> torch.Tensor:
    """matmul with a configuration or a tf32 path forced, so that tests run every candidate
    and both tf32 paths (the product lets the tuner and tf32_mode choose): ``config`` (a
    CONFIGS entry, or any tiles_hopper.persistent_cfg) skips the tuning;
    ``tf32_row_major_b`` picks "gluon" or "swap" for tf32 with a row-major B (tf32_mode
    says which runs)."""
    _common.check_precision(NAME, precision, PRECISIONS)
    M, N, K = _common.check_matmul_2d(NAME, a, b, precision)
    trivial = _common.trivial_result(a, M, N, K)
    if trivial is not None:
        return trivial
    mode = tf32_mode(a, b, tf32_row_major_b, config)
    a_use, b_use, b_k_major, swap_ab, _notes = plan(a, b, precision, mode)
    if swap_ab and mode == "gluon":
        return matmul_swap_gluon.matmul(a_use, b_use)
    # C is written through TMA too: its rows must be 16-byte aligned. If N does not allow
    # that, the kernel writes a padded buffer and the op copies it out once.
    c_aligned = (N * a.element_size()) % 16 == 0
    c_rows = N if c_aligned else _memory.padded16(N, a.element_size())
    c = (torch.empty if c_aligned else torch.zeros)((M, c_rows), dtype=a.dtype,
                                                    device=a.device)[:, :N]
    # a 2-D product is a stack of one
    launch(a_use[None], b_use[None], c[None], precision, b_k_major=b_k_major, swap_ab=swap_ab,
           config=config)
    return c if c_aligned else c.contiguous()


def launch(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, precision: str, *,
           b_k_major: bool = False, swap_ab: bool = False, config: dict | None = None) -> None:
    """C[i] = A[i] @ B[i] for stacks: a (batch x M x K), b (batch x K x N, or with b_k_major
    B^T's stack, batch x N x K), c (batch x M x N), each accepted by _memory.tma_compatible;
    a batch dimension of stride 0 (Tensor.expand) reads one matrix for every product.
    M, N, K, batch >= 1 and batch x tiles < 2^31 (matmul_batched.tma_plan checks it)."""
    batch, M, K = a.shape
    N = c.shape[2]
    step_a, s_ab, s_am, _ = _memory.stack_strides(a)
    step_b, s_bb, s_b, _ = _memory.stack_strides(b)
    _, s_cb, s_cm, _ = _memory.stack_strides(c)
    # num_ctas > 1 (a config option: thread-block clusters) makes each program a cluster
    # of that many CTAs, so the persistent grid has SMs / num_ctas programs.
    ctas = (config or {}).get("num_ctas", 1)
    programs = max(1, num_programs(a.device) // ctas)
    if not _common.interpreting():
        triton.set_allocator(_allocator)
    args = (a, b, c, M, N, K, batch, s_am, s_b, s_cm, s_ab, s_bb, s_cb, step_a, step_b)
    layout = dict(BATCHED=batch > 1, NUM_PROGRAMS=programs, B_K_MAJOR=b_k_major, SWAP_AB=swap_ab,
                  INPUT_PRECISION="tf32", NATIVE_TF32_ROUND=_common.native_tf32_round(a.device))

    def grid(meta):
        tiles = triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]) * batch
        return (min(programs, tiles),)

    if config is not None and batch > 1 and config.get("WARP_SPECIALIZE"):
        raise ValueError(f"{NAME}: warp specialisation does not compile for a stack of "
                         f"products (3-D descriptors, Triton 3.6); got {batch} products")
    if config is None:
        _common.launch(kernel_for(candidates_key(precision, swap_ab, batch > 1)), grid, *args,
                       **layout)
    elif any(k in config for k in ("num_ctas", "maxnreg")) and not _common.interpreting():
        _common.launch(_fixed_kernel(tuple(sorted(config.items()))), grid, *args, **layout)
    else:
        launch_cfg = {k: v for k, v in config.items() if k not in ("num_ctas", "maxnreg")}
        _common.launch(matmul_persistent_kernel, grid(config), *args, **layout, **launch_cfg)


def _op_impl(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    return matmul(a, b, precision)


def op():
    """torch.ops.cvt_triton.matmul_persistent(a, b, precision) (registered on first call)."""
    return _common.register_op("matmul_persistent", _op_impl, derivative="matmul")
