"""Softmax over the last dimension with a row split over several programs:
the Triton twin of cuda/softmax_split.cu, with global memory where CUDA has a cluster.

  idea      a row too long for one program's registers (4096 x 393216: 1.5 MiB of float32
            per row) is cut into G segments of BLOCK elements; program (group, g) keeps
            segment g of its row in registers as one tensor (like softmax_row_sram does with
            a whole row), computes the segment's maximum m_g and its exps e = exp(x - m_g),
            keeps e in place of x, and publishes (m_g, s_g = sum e) in a global workspace.
            When all G pairs of the row are there it folds them as the online softmax folds
            its chunks, M = max m_g, S = sum s_g exp(m_g - M), and writes e exp(m_g - M) / S
            from its registers: one exp per element, the output a multiply. The row crosses
            DRAM once in each direction (the online version reads it twice; at 393216
            elements the second read comes from DRAM: 132 rows of 1.5 MiB in flight do not
            fit the 50 MB L2).
            "When all G pairs are there": each program adds 1 to the row's arrival counter
            (an atomic with release semantics, after its pair is stored) and polls it (acquire)
            until it reads G. That wait is only safe if all G programs of a row run at the same
            time: CUDA guarantees it for the blocks of a cluster (its split softmax's), Triton
            has no clusters, so the grid is PERSISTENT: exactly as many programs as the GPU holds
            at once (G x groups, sized from the compiled kernel's registers, warps and shared
            memory: resident_programs), each group of G programs looping over rows group,
            group + groups, ... The poll gives up after SPIN_LIMIT reads (a wrong answer, never
            a hang, if residency was misjudged).
  exps      float32 outputs keep e = tl.exp(x - m_g) (its subnormal results included). 16-bit
            outputs keep 2^8 e by ex2.approx.ftz (no compare and predicated multiplies per
            element for subnormal results, which tl.exp spends): e is flushed only below
            2^-134, under bfloat16's smallest subnormal (2^-133) whatever the row's scale
            (<= 1) makes of it; adding 8 to the argument rounds it to 2^-20 (1e-6 relative).
            Against taking the exp twice (the sum's, then the output's from x), in SASS at
            393216 with 16384 x 16 warps: 536 instructions instead of 800 in 16-bit, 32
            MUFU.EX2 per thread instead of 64 (the times: docs/performance/memory_bound.md,
            "Variants measured and dropped").
  phases    PHASE 0 (the GPU path): one launch, the exchange above. PHASE 1 + PHASE 2: two
            launches, the first stores the pairs, the second reads the row again, recomputes
            its exps and writes it (3 N traffic, like the online version; no waiting at all).
            The interpreter runs one program after another, so a program waiting for a later
            one would wait forever: there the two launches run (the fold and the output are
            the same code; tl.exp2 stands in for the inline ex2.approx.ftz).
  packed    16-bit rows of 16-byte multiples run as int32 pairs (softmax_row_split_pairs_
            kernel): the segment waits for the
            exchange in one register per two elements where the kernel above keeps a
            float32 per element, so 64 elements per thread fit 64 registers
            (tiles.SOFTMAX_SPLIT_PACKED) and an SM holds 128 KiB of 16-bit segments, as it
            holds of float32 ones; the exp is taken twice (the sum's, then the output's
            from the pairs unpacked again). H100, 4096 x 393216: 77.0-77.6% of the copy
            bandwidth -> 87.6-88.3%; 4096 x 32768: 84.5-84.6% -> 86.0-86.6%
            (results/sweeps/h100/softmax_packed). Other 16-bit rows (odd lengths, offsets
            off 16 bytes) and rows of several segments under the interpreter take the
            kernel above.
  smem      on Hopper, rows of multiples of 64 at least tiles.SOFTMAX_SPLIT_SMEM's length
            (16-bit 65536, float32 262144) take softmax_split_smem.py: this exchange, with
            the segment in shared memory (Gluon: 64 KiB a program filled by TMA, three per
            SM, where registers hold 128 KiB an SM). H100, 4096 x 393216, % of copy: fp32
            90.9 -> 95.4, fp16 88.1 -> 94.2, bf16 87.4 -> 93.3 (results/sweeps/h100/
            softmax_smem).
  tiles     4096-element segments on 4 warps (32 elements per thread) in every type
            (tiles.SOFTMAX_SPLIT: the fastest of 4096 x 4, 8192 x 8 and 16384 x 16 warps at
            4096 x 32768 in every type and at 4096 x 393216 in float32), float32 capped at
            56 registers (9 programs per SM); packed 16-bit rows 8192 elements on 4 warps
            (64 per thread).
  mapping   CUDA (cuda/softmax_split.cu)           this file
            block per slice, slice in shared        program per segment, segment in registers
              memory (copied by cp.async)
            cluster: co-scheduled by the hardware   persistent grid: co-resident by sizing
            pairs in shared memory, read through    pairs in a global workspace, read with
              DSMEM after a cluster barrier           .cg loads after an acquire poll
  traffic   PHASE 0: reads N, writes N elements (2 N sizeof(T)) plus 8 G bytes of pairs and
            the polls per row; PHASE 1 + 2: reads 2 N, writes N.
  precond.  float32 / float16 / bfloat16, softmax over the last dimension (the wrapper makes
            x contiguous); any n >= 1 with n + BLOCK < 2^31, fewer than 2^31 - 2^16 rows (the
            row loop's counter stays in 32 bits); G <= what the GPU holds at once
            (else ValueError: ask for two_launches; the op cvt_triton.softmax_split, the
            registry's triton_softmax_split, takes the two launches itself). Rows of -inf,
            NaN and +inf behave as in softmax.py.
  forced    the product picks every path above by itself; tests reach each kernel on small
            rows through _softmax_split (a shorter segment, the shared-memory kernel asked
            for or refused, its tile).
  run       python -m bench check --kernels triton_softmax_split --shapes 8x100003,5x300
            python -m bench time --kernels '*softmax_split' --shapes 4096x393216 --precision fp16
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, _memory, softmax_split_smem, tiles

NAME = "triton_softmax_split"
SPIN_LIMIT = 1 << 20      # polls of the arrival counter before a program gives up (~1 s)


LOG2E = tl.constexpr(1.4426950408889634)    # log2(e)
RAISE = tl.constexpr(8.0)                   # 16-bit outputs: the kept exps are 2^RAISE e


@triton.jit
def _exp2_ftz(t):
    """2^t by ex2.approx.ftz.f32: results below 2^-126 flushed to zero, without the compare and
    the two predicated multiplies tl.exp spends per element on them (an inline instruction
    the interpreter cannot run: there FTZ is off and _exp2 takes tl.exp2)."""
    return tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=r,r", [t],
                                     dtype=tl.float32, is_pure=True, pack=1)


@triton.jit
def _exp2(t, FTZ: tl.constexpr):
    """2^t: by _exp2_ftz (FTZ, the compiled kernel), else tl.exp2 (the interpreter)."""
    if FTZ:
        return _exp2_ftz(t)
    return tl.exp2(t)


@triton.jit
def _segment_exps(x, OUT_16: tl.constexpr, FTZ: tl.constexpr):
    """The segment's maximum m, the exps it keeps for the output (2^RAISE e for 16-bit
    outputs, e = exp(x - m) for float32: the header's "exps") and their sum s = sum e. A
    segment of -inf: (-inf, zeros, 0)."""
    m = tl.max(x, axis=0)
    shift = tl.where(m == -float("inf"), 0.0, m)               # all -inf: exp(-inf) = 0
    if OUT_16:
        e = _exp2((x - shift) * LOG2E + RAISE, FTZ)
        s = tl.sum(e, axis=0) * 0.00390625                     # 2^-RAISE
    else:
        e = tl.exp(x - shift)
        s = tl.sum(e, axis=0)
    return m, e, s


@triton.jit
def _wait_for_pairs(count_ptr, row, SEGMENTS: tl.constexpr, SPIN_LIMIT: tl.constexpr):
    """Polls the row's arrival counter (acquire) until its G programs have published their
    pairs, or SPIN_LIMIT polls have passed. (A nanosleep between polls, to read L2 less
    often, changed nothing measurable: docs/performance/memory_bound.md.)"""
    seen = tl.atomic_add(count_ptr + row, 0, sem="acquire")
    polls = 0
    while (seen < SEGMENTS) & (polls < SPIN_LIMIT):
        seen = tl.atomic_add(count_ptr + row, 0, sem="acquire")
        polls += 1


@triton.jit
def _row_fold(pairs, k, SEGMENTS: tl.constexpr):
    """The row's maximum M = max m_g and sum S = sum s_g exp(m_g - M), folded from its G
    pairs (read past L1, .cg: the pairs of a neighbour row may share an L1 line)."""
    theirs = pairs + 2 * k                    # i32 ok: 2 k < 2 G < 2^17 (G <= resident)
    pm = tl.load(theirs, mask=k < SEGMENTS, other=-float("inf"), cache_modifier=".cg")
    ps = tl.load(theirs + 1, mask=k < SEGMENTS, other=0.0, cache_modifier=".cg")
    row_max = tl.max(pm, axis=0)
    shift = tl.where(row_max == -float("inf"), 0.0, row_max)
    return row_max, tl.sum(ps * tl.exp(pm - shift), axis=0)


@triton.jit
def _publish(pairs, seg, m, s):
    """This program's (m, s) at pair `seg` of its row's pairs."""
    mine = pairs + 2 * seg                    # i32 ok: 2 seg < 2 G < 2^17 (G <= resident)
    tl.store(mine, m)
    tl.store(mine + 1, s)


@triton.jit
def _exchange(pairs, seg, m, s, count_ptr, row, k, SEGMENTS: tl.constexpr,
              SPIN_LIMIT: tl.constexpr):
    """The one-launch exchange: publish (m, s), arrive (release), wait for the row's other
    G - 1 programs (acquire), fold the G pairs: the row's (M, S). A row of one segment has
    nothing to exchange: its (m, s), and the wrapper zeroes no counters (_workspace)."""
    if SEGMENTS == 1:
        row_max, row_sum = m, s
    else:
        _publish(pairs, seg, m, s)
        tl.debug_barrier()                    # every store of the pair before the release
        tl.atomic_add(count_ptr + row, 1, sem="release")
        _wait_for_pairs(count_ptr, row, SEGMENTS, SPIN_LIMIT)
        row_max, row_sum = _row_fold(pairs, k, SEGMENTS)
    return row_max, row_sum


@triton.jit
def _rescaled(e, m, row_max, row_sum, OUT_16: tl.constexpr):
    """The output: the kept exps times exp(m - M) / S (2^-RAISE more for 16-bit outputs).
    exp(m - M) <= 1, so no product overflows; a segment of -inf (m = -inf) gives 0 * 0 = 0,
    a row of -inf (M = -inf, S = 0) NaN as in softmax, a NaN or +inf in the row NaN (S)."""
    scale = tl.exp(m - row_max) * (1.0 / row_sum)
    if OUT_16:
        scale = scale * 0.00390625                             # 2^-RAISE
    return e * scale


@triton.jit
def softmax_row_split_kernel(
    x_ptr, y_ptr,                             # x, y: [rows, n], contiguous
    part_ptr, count_ptr,                      # pairs: [rows, G, 2] float32; arrivals: [rows] int32, zeroed
    rows, n,                                  # sizes
    BLOCK: tl.constexpr,                      # elements per segment (a power of two)
    SEGMENTS: tl.constexpr,                   # G = cdiv(n, BLOCK): programs per row
    SEGMENTS_P2: tl.constexpr,                # next_power_of_2(G): the pairs as one tensor
    VEC: tl.constexpr,                        # 16 // element size if rows are aligned, else 1
    PHASE: tl.constexpr,                      # 0: one launch with the exchange; 1, 2: two launches
    SPIN_LIMIT: tl.constexpr,                 # polls before giving up
    FTZ: tl.constexpr,                        # 16-bit exps by _exp2_ftz (off under the interpreter)
):
    pid = tl.program_id(0)
    seg = pid % SEGMENTS                      # this program's segment of every row it takes
    group = pid // SEGMENTS
    groups = tl.num_programs(0) // SEGMENTS
    cols = seg * BLOCK + tl.arange(0, BLOCK)  # i32 ok: < n + BLOCK < 2^31 (wrapper)
    n_vec = n // VEC * VEC                    # = n (VEC > 1 only when n % VEC == 0)
    mask = cols < n_vec
    k = tl.arange(0, SEGMENTS_P2)
    out_16: tl.constexpr = y_ptr.dtype.element_ty != tl.float32
    for row in range(group, rows, groups):    # i32 ok: rows + groups < 2^31 (wrapper)
        row64 = tl.cast(row, tl.int64)        # (the interpreter hands the loop a Python int)
        x_row = x_ptr + row64 * n
        y_row = y_ptr + row64 * n
        if VEC > 1:                           # checked by the wrapper: tell the compiler
            x_row = tl.multiple_of(x_row, 16)
            y_row = tl.multiple_of(y_row, 16)
        x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        pairs = part_ptr + row64 * (2 * SEGMENTS)
        m, e, s = _segment_exps(x, out_16, FTZ)   # PHASE 2: the same m as PHASE 1 published
        if PHASE == 0:
            row_max, row_sum = _exchange(pairs, seg, m, s, count_ptr, row, k, SEGMENTS,
                                         SPIN_LIMIT)
        elif PHASE == 1:
            _publish(pairs, seg, m, s)
        else:
            row_max, row_sum = _row_fold(pairs, k, SEGMENTS)
        if PHASE != 1:
            y = _rescaled(e, m, row_max, row_sum, out_16)
            tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")


@triton.jit
def _halves(p, BF16: tl.constexpr):
    """The two 16-bit values of each int32 of p (element 2i in the low half, 2i + 1 in the
    high) as float32: bfloat16 (BF16) or float16."""
    lo = (p & 0xFFFF).to(tl.int16)
    hi = (p >> 16).to(tl.int16)
    if BF16:
        return (lo.to(tl.bfloat16, bitcast=True).to(tl.float32),
                hi.to(tl.bfloat16, bitcast=True).to(tl.float32))
    return (lo.to(tl.float16, bitcast=True).to(tl.float32),
            hi.to(tl.float16, bitcast=True).to(tl.float32))


@triton.jit
def _kept(p, KEEP: tl.constexpr):
    """p through an identity instruction the compiler may not merge or move (KEEP, the
    compiled kernel): the halves taken after the exchange are then a second unpacking of
    the int32 pairs, not the float32 copies of the first kept alive across the exchange in
    twice the registers. The interpreter returns p."""
    if KEEP:
        return tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [p], dtype=tl.int32,
                                         is_pure=False, pack=1)
    return p


@triton.jit
def _paired(lo, hi, BF16: tl.constexpr):
    """float32 lo, hi rounded to bfloat16 (BF16) or float16 and packed into one int32 (lo in
    the low half)."""
    if BF16:
        lo16 = lo.to(tl.bfloat16).to(tl.int16, bitcast=True)
        hi16 = hi.to(tl.bfloat16).to(tl.int16, bitcast=True)
    else:
        lo16 = lo.to(tl.float16).to(tl.int16, bitcast=True)
        hi16 = hi.to(tl.float16).to(tl.int16, bitcast=True)
    return (lo16.to(tl.int32) & 0xFFFF) | (hi16.to(tl.int32) << 16)


@triton.jit
def softmax_row_split_pairs_kernel(
    x_ptr, y_ptr,                             # x, y: [rows, n / 2] int32: the 16-bit rows in pairs
    part_ptr, count_ptr,                      # pairs: [rows, G, 2] float32; arrivals: [rows] int32, zeroed
    rows, n2,                                 # rows, int32 pairs per row (n / 2)
    BF16: tl.constexpr,                       # the element type: bfloat16 (else float16)
    NEG_INF_PAIR: tl.constexpr,               # two -inf of that type as one int32 (past the row's end)
    BLOCK: tl.constexpr,                      # int32 pairs per segment (a power of two)
    SEGMENTS: tl.constexpr,                   # G = cdiv(n2, BLOCK): programs per row
    SEGMENTS_P2: tl.constexpr,                # next_power_of_2(G)
    SPIN_LIMIT: tl.constexpr,                 # polls before giving up
    FTZ: tl.constexpr,                        # exps by _exp2_ftz, _kept's barrier (off under the interpreter)
):
    """PHASE 0 of softmax_row_split_kernel for 16-bit rows held as int32 pairs (the packed
    path, the default for 16-bit rows of 16-byte multiples): the segment waits for the
    exchange in the registers of its 16-bit data, one per two elements, where the kernel
    above keeps a float32 per element;
    the exp is taken twice (the sum's, then the output's from the pairs unpacked again,
    2^RAISE exp(x - M) times 2^-RAISE / S)."""
    pid = tl.program_id(0)
    seg = pid % SEGMENTS
    group = pid // SEGMENTS
    groups = tl.num_programs(0) // SEGMENTS
    cols = seg * BLOCK + tl.arange(0, BLOCK)  # i32 ok: < n2 + BLOCK < 2^31 (wrapper)
    mask = cols < n2
    k = tl.arange(0, SEGMENTS_P2)
    for row in range(group, rows, groups):    # i32 ok: rows + groups < 2^31 (wrapper)
        row64 = tl.cast(row, tl.int64)
        x_row = tl.multiple_of(x_ptr + row64 * n2, 16)    # 16-byte rows (wrapper)
        y_row = tl.multiple_of(y_ptr + row64 * n2, 16)
        p = tl.load(x_row + cols, mask=mask, other=NEG_INF_PAIR)
        lo, hi = _halves(p, BF16)
        m = tl.maximum(tl.max(lo, axis=0), tl.max(hi, axis=0))
        shift = tl.where(m == -float("inf"), 0.0, m)
        lo, hi = _halves(_kept(p, FTZ), BF16)  # unpacked again: only p lives across the max
        s = (tl.sum(_exp2((lo - shift) * LOG2E, FTZ), axis=0)
             + tl.sum(_exp2((hi - shift) * LOG2E, FTZ), axis=0))
        pairs = part_ptr + row64 * (2 * SEGMENTS)
        row_max, row_sum = _exchange(pairs, seg, m, s, count_ptr, row, k, SEGMENTS, SPIN_LIMIT)
        low = (1.0 / row_sum) * 0.00390625                     # 2^-RAISE / S
        lo, hi = _halves(_kept(p, FTZ), BF16)
        y_lo = _exp2((lo - row_max) * LOG2E + RAISE, FTZ) * low   # M = -inf: NaN
        y_hi = _exp2((hi - row_max) * LOG2E + RAISE, FTZ) * low
        tl.store(y_row + cols, _paired(y_lo, y_hi, BF16), mask=mask, cache_modifier=".cs")


def resident_programs(n_regs: int, shared: int, warps: int, device: torch.device) -> int:
    """How many programs of a compiled kernel the GPU holds at once: per SM, the least of what
    its threads, its registers (allocated per warp in units of 256) and its shared memory
    allow, times the SMs. INTERPRETER_SM_COUNT programs under the interpreter."""
    if _common.interpreting() or device.type != "cuda":
        return _common.INTERPRETER_SM_COUNT
    props = _common.cuda_properties(device)
    by_threads = props.max_threads_per_multi_processor // (32 * warps)
    regs_per_warp = -(-max(n_regs, 1) * 32 // 256) * 256
    by_regs = props.regs_per_multiprocessor // regs_per_warp // warps
    by_smem = props.shared_memory_per_multiprocessor // (shared + 1024) if shared else by_threads
    return max(0, min(by_threads, by_regs, by_smem)) * props.multi_processor_count


_resident: dict = {}   # (kernel, dtype, constexprs, warps, device) -> resident_programs


def _resident_for(kernel, args: tuple, meta: dict, device: torch.device,
                  dtype: torch.dtype | None = None) -> int:
    """resident_programs of the one-launch kernel these arguments compile to (compiled once,
    without launching: warmup; loading the binary gives its register count). dtype: the
    rows' (default: the first argument's)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    key = (kernel.fn.__name__, dtype or args[0].dtype, tuple(sorted(meta.items())), index)
    if key not in _resident:
        compiled = kernel.warmup(*args, grid=(1,), **meta)
        compiled._init_handles()
        _resident[key] = resident_programs(compiled.n_regs, compiled.metadata.shared,
                                           meta["num_warps"], device)
    return _resident[key]


def _one_launch_groups(kernel, args: tuple, meta: dict, segments: int, rows: int,
                       groups: int | None, device: torch.device,
                       dtype: torch.dtype | None = None) -> tuple[int, int]:
    """(groups of G programs for the one-launch grid, programs the GPU holds at once): as
    many groups as fit (at most ``groups``, at most one per row), 0 if one row's G programs
    do not fit. dtype: the rows' (_resident_for)."""
    if _common.interpreting():
        resident = _common.INTERPRETER_SM_COUNT
    else:
        resident = _resident_for(kernel, args, meta, device, dtype)
    most = resident // segments
    return min(most, groups or most, rows), resident


def _segment(tile: tuple, n: int, block: int | None, per_warp: int) -> tuple[int, int]:
    """(elements per segment, warps): the tile's segment (no longer than the row needs), or
    the one a test asks for (_softmax_split), on as many warps as take per_warp elements
    each (at most the tile's)."""
    seg, w, _cap = tile
    block = block or max(16, min(seg, triton.next_power_of_2(n)))
    return block, max(1, min(w, block // per_warp))


def _default_cap(cap: int | None, segments: int) -> int | None:
    """The tile's register cap where a row takes several programs (it decides how many fit
    an SM, and all of a row's must run at once); none for rows of one segment, where the
    cap only spills: the packed kernel at 4096 x 2 warps takes 93 registers uncapped and
    spills 77 under 64 (ptxas, sm_90), since without the exchange between them the
    compiler overlaps the sum's exps with the outputs'."""
    return cap if segments > 1 else None


def _workspace(rows: int, segments: int, device,
               two_launches: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """The exchange's pairs ([rows, G, 2] float32) and arrival counters ([rows] int32,
    zeroed). In one launch rows of one segment exchange nothing (_exchange): one unused
    element each, and no launch to zero the counters (which cost the small rows of the
    source documents up to a third of their time against torch.softmax). The two launches
    always pass their pairs from the first to the second."""
    if segments == 1 and not two_launches:
        return (torch.empty(2, dtype=torch.float32, device=device),
                torch.empty(1, dtype=torch.int32, device=device))
    return (torch.empty((rows, segments, 2), dtype=torch.float32, device=device),
            torch.zeros(rows, dtype=torch.int32, device=device))


def config(element_size: int, n: int):
    """(BLOCK, warps, G) for rows of n elements: tiles.SOFTMAX_SPLIT's segment, no longer than
    the row needs, 32 elements per thread."""
    return _config(element_size, n, None)


def _config(element_size: int, n: int, block: int | None):
    """config, or the segment _softmax_split asks for (``block``)."""
    block, warps = _segment(tiles.SOFTMAX_SPLIT[element_size], n, block, 1024)
    return block, warps, triton.cdiv(n, block)


def softmax_split(x: torch.Tensor, dim: int = -1, *, two_launches: bool = False,
                  fallback: bool = False) -> torch.Tensor:
    """softmax(x, dim=-1) with each row split over G programs, every path picked from the
    row (the header): ``two_launches`` runs PHASE 1 + 2 (always, under the interpreter, when
    a row takes several programs); ``fallback``: a row that needs more programs than the GPU
    holds at once runs the two launches (else ValueError). The op passes both
    (_split_impl: two launches while torch traces, the fallback always)."""
    return _softmax_split(x, dim, two_launches=two_launches, fallback=fallback)


def _softmax_split(x: torch.Tensor, dim: int = -1, *, two_launches: bool = False,
                   fallback: bool = False, block: int | None = None, smem: bool | None = None,
                   smem_tile: tuple | None = None) -> torch.Tensor:
    """softmax_split with a path forced, so that tests reach every kernel on small rows (the
    product takes the defaults): ``block`` a segment other than tiles.SOFTMAX_SPLIT's (and
    tiles.SOFTMAX_SPLIT_PACKED's: rows of several segments at a small n); ``smem`` True asks
    for the shared-memory kernel at any length (softmax_split_smem.py, Gluon: rows of
    multiples of 64, 16-byte aligned, on Hopper; other rows take the kernels here), False
    keeps the register kernels, None (the product's) decides by tiles.SOFTMAX_SPLIT_SMEM's
    length; ``smem_tile`` (segment bytes, buffers, warps) overrides that table's. 16-bit rows
    of 16-byte multiples run as int32 pairs (softmax_row_split_pairs_kernel) wherever that
    kernel takes them; other rows, and rows of several segments under the interpreter, the
    kernel above."""
    _memory.check_float(NAME, x)
    if x.dim() == 0 or dim not in (-1, x.dim() - 1):
        raise ValueError(f"{NAME}: softmax over the last dimension only, got dim {dim} of a "
                         f"{x.dim()}-D tensor")
    _memory.check_device(NAME, x)
    x = x.contiguous()
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    n = x.shape[-1]
    rows = x.numel() // n
    asked = block                             # the packed path has its own default
    block, warps, segments = _config(x.element_size(), n, block)
    if n + block >= 2**31 or rows >= 2**31 - 2**16:
        raise ValueError(f"{NAME}: rows must be shorter than 2^31 - {block} elements and fewer "
                         f"than 2^31 - 2^16, got {rows} rows of {n}")
    vec = _memory.vector_width(x.dtype, x, y, row_elements=n)
    if vec > 1 and not two_launches and _smem_split(x, y, rows, n, smem, smem_tile, None):
        return y
    if x.element_size() == 2 and vec > 1 and not two_launches:
        done = _packed_split(x, y, rows, n, asked)
        if done is not None:
            return done
    interpreting = _common.interpreting()
    meta = dict(BLOCK=block, SEGMENTS=segments, SEGMENTS_P2=triton.next_power_of_2(segments),
                VEC=vec, SPIN_LIMIT=SPIN_LIMIT, FTZ=not interpreting, num_warps=warps)

    def in_two_launches():
        # any size (no program waits for another), within the grid limit of 2^31 - 1 programs
        grid = (segments * min(rows, 65535, max(1, (2**31 - 1) // segments)),)
        both = (x, y, *_workspace(rows, segments, x.device, two_launches=True), rows, n)
        _common.launch(softmax_row_split_kernel, grid, *both, PHASE=1, **meta)
        _common.launch(softmax_row_split_kernel, grid, *both, PHASE=2, **meta)
        return y

    if two_launches or (interpreting and segments > 1):
        return in_two_launches()
    args = (x, y, *_workspace(rows, segments, x.device), rows, n)
    one_launch = dict(meta, PHASE=0)
    cap = _default_cap(tiles.SOFTMAX_SPLIT[x.element_size()][2], segments)
    if cap and not interpreting:
        one_launch["maxnreg"] = cap           # ptxas's cap (the interpreter has no registers)
    fit, resident = _one_launch_groups(softmax_row_split_kernel, args, one_launch, segments,
                                       rows, None, x.device)
    if fit < 1 and fallback:
        return in_two_launches()
    if fit < 1:
        raise ValueError(f"{NAME}: a row of {n} elements needs {segments} programs running at "
                         f"once, the GPU holds {resident} of this kernel; use two_launches=True "
                         f"or fallback=True")
    _common.launch(softmax_row_split_kernel, (segments * fit,), *args, **one_launch)
    return y


def _smem_split(x, y, rows: int, n: int, smem: bool | None, tile: tuple | None,
                groups: int | None) -> bool:
    """softmax_split's shared-memory path: True if it ran (y written), False where it does
    not apply (not asked for, or asked by default and the row is shorter than the table's
    length; no Hopper GPU or the interpreter; n not a multiple of 64; more segments than the
    GPU holds at once). groups: at most that many groups of programs (None, the product's:
    as many as fit; tests ask for one, every row through the same programs)."""
    if smem is None:
        shortest = tiles.SOFTMAX_SPLIT_SMEM[x.element_size()][3]
        smem = shortest is not None and n >= shortest
    if not smem or not softmax_split_smem.available(x):
        return False
    p = softmax_split_smem.plan(x.element_size(), n, *(tile or ()))
    if p is None:
        return False
    kernel = softmax_split_smem.softmax_row_split_smem_kernel
    args, meta = softmax_split_smem.arguments(x, y, p, *_workspace(rows, p["SEGMENTS"],
                                                                   x.device), SPIN_LIMIT)
    fit, _ = _one_launch_groups(kernel, args, meta, p["SEGMENTS"], rows, groups, x.device,
                                x.dtype)
    if fit < 1:
        return False
    _common.launch(kernel, (p["SEGMENTS"] * fit,), *args, **meta)
    return True


# two -inf of each 16-bit type as one int32 (the pairs kernel's value past a row's end)
_NEG_INF_PAIR = {torch.float16: -0x03FF0400, torch.bfloat16: -0x007F0080}    # 0xFC00FC00, 0xFF80FF80


def _packed_split(x, y, rows: int, n: int, block: int | None = None):
    """softmax_split's packed path: y, or None where it does not apply (a row of several
    segments under the interpreter, or more segments than the GPU holds at once). block:
    _softmax_split's."""
    tile = tiles.SOFTMAX_SPLIT_PACKED[2]
    block, warps = _segment(tile, n, block, 2048)   # 64 elements (32 pairs) per thread
    n2, block2 = n // 2, block // 2
    segments = triton.cdiv(n2, block2)
    interpreting = _common.interpreting()
    if interpreting and segments > 1:
        return None
    xp, yp = x.view(torch.int32), y.view(torch.int32)
    pairs, count = _workspace(rows, segments, x.device)
    meta = dict(BF16=x.dtype == torch.bfloat16, NEG_INF_PAIR=_NEG_INF_PAIR[x.dtype],
                BLOCK=block2, SEGMENTS=segments, SEGMENTS_P2=triton.next_power_of_2(segments),
                SPIN_LIMIT=SPIN_LIMIT, FTZ=not interpreting, num_warps=warps)
    cap = _default_cap(tile[2], segments)
    if cap and not interpreting:
        meta["maxnreg"] = cap                 # ptxas's cap (the interpreter has no registers)
    args = (xp, yp, pairs, count, rows, n2)
    fit, _ = _one_launch_groups(softmax_row_split_pairs_kernel, args, meta, segments, rows,
                                None, x.device)
    if fit < 1:
        return None
    _common.launch(softmax_row_split_pairs_kernel, (segments * fit,), *args, **meta)
    return y


def _split_impl(x: torch.Tensor, dim: int) -> torch.Tensor:
    # Traced (torch.compile, opcheck: fake tensors), the two launches: the one-launch grid is
    # sized from the compiled kernel's registers (_resident_for), which a fake tensor cannot
    # compile; the graph then reads the row twice (3 N, like the online version).
    return softmax_split(x, dim, two_launches=_common.tracing((x,)), fallback=True)


def op():
    """torch.ops.cvt_triton.softmax_split(x, dim) (registered on first call): softmax_split's
    defaults (the one-launch exchange; on Hopper long rows of multiples of 64 with their
    segments in shared memory, softmax_split_smem.py; other 16-bit rows of 16-byte multiples
    packed), rows only (dim = the last); a row that needs more programs than the GPU holds
    at once takes the two launches."""
    return _common.register_op("softmax_split", _split_impl, derivative="softmax")
