"""Softmax over the last dimension with a row split over several programs (version 3):
the Triton twin of cuda/softmax_split.cu, with global memory where CUDA has a cluster.

  idea      a row too long for one program's registers (4096 x 393216: 1.5 MiB of float32
            per row) is cut into G segments of BLOCK elements; program (group, g) keeps
            segment g of its row in registers as one tensor (like softmax_row_sram does with
            a whole row), computes the segment's maximum m_g and sum s_g = sum exp(x - m_g),
            and publishes (m_g, s_g) in a global workspace. When all G pairs of the row are
            there it folds them as the online softmax folds its chunks, M = max m_g,
            S = sum s_g exp(m_g - M), and writes exp(x - M) / S from its registers. The row
            crosses DRAM once in each direction (the online version reads it twice; at
            393216 elements the second read comes from DRAM: 132 rows of 1.5 MiB in flight do
            not fit the 50 MB L2).
            "When all G pairs are there": each program adds 1 to the row's arrival counter
            (an atomic with release semantics, after its pair is stored) and polls it (acquire)
            until it reads G. That wait is only safe if all G programs of a row run at the same
            time: CUDA guarantees it for the blocks of a cluster (version 3 in CUDA), Triton has
            no clusters, so the grid is PERSISTENT: exactly as many programs as the GPU holds
            at once (G x groups, sized from the compiled kernel's registers, warps and shared
            memory: resident_programs), each group of G programs looping over rows group,
            group + groups, ... The poll gives up after SPIN_LIMIT reads (a wrong answer, never
            a hang, if residency was misjudged).
  phases    PHASE 0 (the GPU path): one launch, the exchange above. PHASE 1 + PHASE 2: two
            launches, the first stores the pairs, the second reads the row again and writes
            it (3 N traffic, like the online version; no waiting at all). The interpreter runs
            one program after another, so a program waiting for a later one would wait forever:
            there the two launches run (the fold and the output are the same code).
  pipelined softmax_row_split_pipelined_kernel (pipelined=True; the default stays the plain
            loop): PHASE 0 with the row loop software-pipelined. Right after the release of
            row r's pair the program issues the loads of its segment of row r + groups into a
            second register tensor (kept in the input's type: a 16-bit segment costs half the
            registers of its float32 copy), then polls, folds and writes row r; the loads are
            first waited for at the top of the next iteration. So DRAM reads continue while
            the program waits for the other G - 1 pairs and while it stores, where the plain
            loop has nothing of its own in flight. (In float32 ptxas copies the loaded
            registers into the loop-carried ones during the output's arithmetic: the wait
            comes after the poll and the fold, before the stores. The SASS is checked in
            tests/cpu/test_debt_variants_compiled.py.) prefetch_at="top" issues them before the
            pair's arithmetic instead, in flight during it too, but then before the release
            (MEMBAR.ALL.GPU in SASS, which must order the thread's earlier accesses: whether
            it waits for loads still in flight is what that variant measures). Cost: two
            segments in registers, so 8192 x 8 warps in every type (tiles.
            SOFTMAX_SPLIT_PIPELINED): float32 112 registers, 2 programs per SM with 64 KiB of
            next segments in flight; 16-bit 80, 3 per SM, 48 KiB (Little's law asks ~23 KiB).
  hints     load_hint="evict_first" or "cg" marks the segment loads of either kernel (L2
            evict-first policy; .cg: past L1), to see whether the 16-bit rows lose in how
            they are loaded rather than in the exchange.
  lean      (lean=True; the default stays tl.exp) the exps by ex2.approx.ftz, as CUDA's
            version 3 takes them by default (cuda/softmax_split.cu, CVT_SPLIT_LEAN): tl.exp
            spends a compare and two predicated multiplies per element on subnormal results;
            the segment's sum flushes them (a sum of at least 1 cannot see them), a 16-bit
            output takes the argument raised by 64 and the scale lowered by 2^-64. In SASS
            the 16-bit kernel drops from 800 to 608 instructions, float32 from 824 to 728
            (its output keeps tl.exp). The interpreter runs tl.exp.
  mapping   CUDA (cuda/softmax_split.cu)           this file
            block per slice, slice in shared        program per segment, segment in registers
              memory (copied by cp.async)
            cluster: co-scheduled by the hardware   persistent grid: co-resident by sizing
            pairs in shared memory, read through    pairs in a global workspace, read with
              DSMEM after a cluster barrier           .cg loads after an acquire poll
  traffic   PHASE 0 (plain or pipelined): reads N, writes N elements (2 N sizeof(T)) plus
            8 G bytes of pairs and the polls per row; PHASE 1 + 2: reads 2 N, writes N.
  precond.  float32 / float16 / bfloat16, softmax over the last dimension (the wrapper makes
            x contiguous); any n >= 1 with n + BLOCK < 2^31, fewer than 2^31 - 2^16 rows (the
            row loop's counter stays in 32 bits); G <= what the GPU holds at once
            (else ValueError: ask for two_launches; the op cvt_triton.softmax_split, the
            registry's triton_softmax_split, takes the two launches itself). Rows of -inf, NaN and +inf behave as in
            softmax.py.
  run       python docs/performance/debts/debts_h100.py OUT --sections softmax   (the
            variants side by side; --plan lists them)
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, _memory, tiles

NAME = "triton_softmax_split"
SPIN_LIMIT = 1 << 20      # polls of the arrival counter before a program gives up (~1 s)


LOG2E = tl.constexpr(1.4426950408889634)    # log2(e)


@triton.jit
def _exp2_ftz(t):
    """2^t by ex2.approx.ftz.f32: results below 2^-126 flushed to zero, without the compare and
    the two predicated multiplies tl.exp spends per element on them (the LEAN variant; an
    inline instruction the interpreter cannot run, so the wrapper turns LEAN off there)."""
    return tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=r,r", [t],
                                     dtype=tl.float32, is_pure=True, pack=1)


@triton.jit
def _exp2(t, FTZ: tl.constexpr):
    """2^t: by _exp2_ftz (FTZ, the compiled kernel), else tl.exp2 (the interpreter)."""
    if FTZ:
        return _exp2_ftz(t)
    return tl.exp2(t)


RAISE = tl.constexpr(8.0)    # EXP_ONCE, 16-bit outputs: the kept exps are 2^8 e


@triton.jit
def _segment_exps(x, OUT_16: tl.constexpr, FTZ: tl.constexpr):
    """EXP_ONCE: the segment's maximum m, the exps it keeps for the output and their sum
    s = sum exp(x - m). float32 outputs keep e = tl.exp(x - m) (subnormals included). 16-bit
    outputs keep 2^RAISE e by ex2.approx.ftz: flushed only where e < 2^-134, below bfloat16's
    smallest subnormal (2^-133) however the row's scale multiplies it (the scale is <= 1), and
    the argument rounded to 2^-20 (1e-6 relative, far below 16-bit precision)."""
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
def _rescaled(e, m, row_max, row_sum, OUT_16: tl.constexpr):
    """EXP_ONCE's output: the kept exps times exp(m - M) / S (2^-RAISE more for 16-bit
    outputs), one multiply per element where the output otherwise takes a second exp.
    exp(m - M) <= 1, so e times it never overflows; a segment of -inf (m = -inf) gives
    0 * 0 = 0, a row of -inf (M = -inf, S = 0) NaN as in softmax, a NaN or +inf S NaN."""
    scale = tl.exp(m - row_max) * (1.0 / row_sum)
    if OUT_16:
        scale = scale * 0.00390625                             # 2^-RAISE
    return e * scale


@triton.jit
def _publish_pair(pairs, seg, x, LEAN: tl.constexpr = False):
    """This program's (max, sum of exp(x - max)) of its segment, stored at pair `seg` of the
    row's pairs (an all -inf segment: (-inf, 0)). LEAN: the sum's exps flushed below 2^-126
    (they cannot move a sum that is at least 1), as cuda/softmax_split.cu's lean arithmetic."""
    m = tl.max(x, axis=0)
    shift = tl.where(m == -float("inf"), 0.0, m)               # all -inf: exp(-inf) = 0
    if LEAN:
        s = tl.sum(_exp2_ftz((x - shift) * LOG2E), axis=0)
    else:
        s = tl.sum(tl.exp(x - shift), axis=0)
    mine = pairs + 2 * seg                    # i32 ok: 2 seg < 2 G < 2^17 (G <= resident)
    tl.store(mine, m)
    tl.store(mine + 1, s)


@triton.jit
def _wait_for_pairs(count_ptr, row, SEGMENTS: tl.constexpr, SPIN_LIMIT: tl.constexpr):
    """Polls the row's arrival counter (acquire) until its G programs have published their
    pairs, or SPIN_LIMIT polls have passed."""
    seen = tl.atomic_add(count_ptr + row, 0, sem="acquire")
    polls = 0
    while (seen < SEGMENTS) & (polls < SPIN_LIMIT):
        seen = tl.atomic_add(count_ptr + row, 0, sem="acquire")
        polls += 1


@triton.jit
def _normalized(x, pairs, k, SEGMENTS: tl.constexpr, LEAN_OUT: tl.constexpr = False):
    """exp(x - row max) / row sum, the row's max and sum folded from its G pairs. LEAN_OUT
    (16-bit outputs of the LEAN variant): exp2 flushed below 2^-126 of the argument raised by
    64, the scale lowered by 2^-64, so outputs down to 2^-190 keep their subnormals; the raise
    rounds the argument to 2^-18, 3e-6 relative (cuda/softmax_split.cu's lean arithmetic)."""
    row_max, row_sum = _row_fold(pairs, k, SEGMENTS)
    if LEAN_OUT:
        low = (1.0 / row_sum) * 5.421010862427522e-20          # inv * 2^-64: normal
        return _exp2_ftz((x - row_max) * LOG2E + 64.0) * low   # a row of -inf: NaN
    return tl.exp(x - row_max) * (1.0 / row_sum)               # a row of -inf: exp(NaN) = NaN


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
    LOAD_CACHE: tl.constexpr = "",            # cache modifier of the segment loads ("", ".cg")
    LOAD_EVICT: tl.constexpr = "",            # their L2 policy ("", "evict_first")
    LEAN: tl.constexpr = False,               # exps by ex2.approx.ftz (_exp2_ftz; not interpreted)
    EXP_ONCE: tl.constexpr = False,           # the pair's exps kept and rescaled (_segment_exps)
    FTZ: tl.constexpr = False,                # EXP_ONCE's 16-bit exps by _exp2_ftz (not interpreted)
):
    pid = tl.program_id(0)
    seg = pid % SEGMENTS                      # this program's segment of every row it takes
    group = pid // SEGMENTS
    groups = tl.num_programs(0) // SEGMENTS
    cols = seg * BLOCK + tl.arange(0, BLOCK)  # i32 ok: < n + BLOCK < 2^31 (wrapper)
    n_vec = n // VEC * VEC                    # = n (VEC > 1 only when n % VEC == 0)
    mask = cols < n_vec
    k = tl.arange(0, SEGMENTS_P2)
    for row in range(group, rows, groups):    # i32 ok: rows + groups < 2^31 (wrapper)
        row64 = tl.cast(row, tl.int64)        # (the interpreter hands the loop a Python int)
        x_row = x_ptr + row64 * n
        y_row = y_ptr + row64 * n
        if VEC > 1:                           # checked by the wrapper: tell the compiler
            x_row = tl.multiple_of(x_row, 16)
            y_row = tl.multiple_of(y_row, 16)
        x = tl.load(x_row + cols, mask=mask, other=-float("inf"), cache_modifier=LOAD_CACHE,
                    eviction_policy=LOAD_EVICT).to(tl.float32)
        pairs = part_ptr + row64 * (2 * SEGMENTS)
        out_16: tl.constexpr = y_ptr.dtype.element_ty != tl.float32
        if EXP_ONCE:
            m, e, s = _segment_exps(x, out_16, FTZ)
            if PHASE != 2:
                tl.store(pairs + 2 * seg, m)
                tl.store(pairs + 2 * seg + 1, s)
        elif PHASE != 2:
            _publish_pair(pairs, seg, x, LEAN)
        if PHASE == 0:
            tl.debug_barrier()                # every store of the pair before the release
            tl.atomic_add(count_ptr + row, 1, sem="release")
            _wait_for_pairs(count_ptr, row, SEGMENTS, SPIN_LIMIT)
        if PHASE != 1:
            if EXP_ONCE:
                row_max, row_sum = _row_fold(pairs, k, SEGMENTS)
                y = _rescaled(e, m, row_max, row_sum, out_16)
            else:
                y = _normalized(x, pairs, k, SEGMENTS, LEAN and out_16)
            tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")


@triton.jit
def _segment_of_row(x_ptr, row, rows, n, cols, mask, VEC: tl.constexpr,
                    LOAD_CACHE: tl.constexpr, LOAD_EVICT: tl.constexpr):
    """This program's segment of row `row` as stored (-inf past the row's end); nothing is
    read when row >= rows (the row after a program's last one)."""
    x_row = x_ptr + tl.cast(row, tl.int64) * n
    if VEC > 1:                               # checked by the wrapper: tell the compiler
        x_row = tl.multiple_of(x_row, 16)
    return tl.load(x_row + cols, mask=mask & (row < rows), other=-float("inf"),
                   cache_modifier=LOAD_CACHE, eviction_policy=LOAD_EVICT)


@triton.jit
def softmax_row_split_pipelined_kernel(
    x_ptr, y_ptr,                             # x, y: [rows, n], contiguous
    part_ptr, count_ptr,                      # pairs: [rows, G, 2] float32; arrivals: [rows] int32, zeroed
    rows, n,                                  # sizes
    BLOCK: tl.constexpr,                      # elements per segment (a power of two)
    SEGMENTS: tl.constexpr,                   # G = cdiv(n, BLOCK): programs per row
    SEGMENTS_P2: tl.constexpr,                # next_power_of_2(G): the pairs as one tensor
    VEC: tl.constexpr,                        # 16 // element size if rows are aligned, else 1
    SPIN_LIMIT: tl.constexpr,                 # polls before giving up
    LOAD_CACHE: tl.constexpr = "",            # cache modifier of the segment loads ("", ".cg")
    LOAD_EVICT: tl.constexpr = "",            # their L2 policy ("", "evict_first")
    PREFETCH_AT_TOP: tl.constexpr = False,    # next segment issued before the pair, not after the release
    LEAN: tl.constexpr = False,               # exps by ex2.approx.ftz (_exp2_ftz; not interpreted)
):
    """PHASE 0 of softmax_row_split_kernel with the row loop software-pipelined: the loop
    carries the program's segment of its next row, loaded (in the input's type) while this
    row's pair is exchanged and its output written."""
    pid = tl.program_id(0)
    seg = pid % SEGMENTS
    group = pid // SEGMENTS
    groups = tl.num_programs(0) // SEGMENTS
    cols = seg * BLOCK + tl.arange(0, BLOCK)  # i32 ok: < n + BLOCK < 2^31 (wrapper)
    n_vec = n // VEC * VEC
    mask = cols < n_vec
    k = tl.arange(0, SEGMENTS_P2)
    # prologue: the first row's segment (group < rows: the wrapper launches at most rows groups)
    x_next = _segment_of_row(x_ptr, group, rows, n, cols, mask, VEC, LOAD_CACHE, LOAD_EVICT)
    for row in range(group, rows, groups):    # i32 ok: rows + groups < 2^31 (wrapper)
        row64 = tl.cast(row, tl.int64)        # (the interpreter hands the loop a Python int)
        x = x_next.to(tl.float32)             # the first wait for the loads issued last iteration
        nxt = row + groups                    # i32 ok: rows + groups < 2^31 (wrapper)
        if PREFETCH_AT_TOP:                   # in flight during the pair's arithmetic too
            x_next = _segment_of_row(x_ptr, nxt, rows, n, cols, mask, VEC, LOAD_CACHE,
                                     LOAD_EVICT)
        pairs = part_ptr + row64 * (2 * SEGMENTS)
        _publish_pair(pairs, seg, x, LEAN)
        tl.debug_barrier()                    # every store of the pair before the release
        tl.atomic_add(count_ptr + row, 1, sem="release")
        if not PREFETCH_AT_TOP:
            # after the release, before the poll: in flight while the program waits for the
            # other G - 1 pairs, folds them and writes this row (the release, MEMBAR.ALL.GPU
            # in SASS, must order the thread's earlier accesses: issued after it, the loads
            # cannot be held by it)
            x_next = _segment_of_row(x_ptr, nxt, rows, n, cols, mask, VEC, LOAD_CACHE,
                                     LOAD_EVICT)
        _wait_for_pairs(count_ptr, row, SEGMENTS, SPIN_LIMIT)
        y = _normalized(x, pairs, k, SEGMENTS, LEAN and y_ptr.dtype.element_ty != tl.float32)
        y_row = y_ptr + row64 * n
        if VEC > 1:
            y_row = tl.multiple_of(y_row, 16)
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")


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

# load_hint -> the segment loads' (cache modifier, L2 eviction policy): whether a row that is
# read once streams better past L1 (.cg) or marked first to leave L2 (evict_first).
LOAD_HINTS = {"": ("", ""), "evict_first": ("", "evict_first"), "cg": (".cg", "")}


def _resident_for(kernel, args: tuple, meta: dict, device: torch.device) -> int:
    """resident_programs of the one-launch kernel these arguments compile to (compiled once,
    without launching: warmup; loading the binary gives its register count)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    key = (kernel.fn.__name__, args[0].dtype, tuple(sorted(meta.items())), index)
    if key not in _resident:
        compiled = kernel.warmup(*args, grid=(1,), **meta)
        compiled._init_handles()
        _resident[key] = resident_programs(compiled.n_regs, compiled.metadata.shared,
                                           meta["num_warps"], device)
    return _resident[key]


def config(element_size: int, n: int, block: int | None = None, warps: int | None = None,
           pipelined: bool = False):
    """(BLOCK, warps, G) for rows of n elements: tiles.SOFTMAX_SPLIT's segment (or
    tiles.SOFTMAX_SPLIT_PIPELINED's), no longer than the row needs."""
    table = tiles.SOFTMAX_SPLIT_PIPELINED if pipelined else tiles.SOFTMAX_SPLIT
    seg, w = table[element_size]
    block = block or max(16, min(seg, triton.next_power_of_2(n)))
    warps = warps or max(1, min(w, block // 1024))     # 32 elements per thread
    return block, warps, triton.cdiv(n, block)


def softmax_split(x: torch.Tensor, dim: int = -1, *, block: int | None = None,
                  warps: int | None = None, two_launches: bool = False,
                  groups: int | None = None, pipelined: bool = False,
                  prefetch_at: str = "release", load_hint: str = "",
                  lean: bool = False, exp_once: bool = False,
                  fallback: bool = False) -> torch.Tensor:
    """softmax(x, dim=-1) with each row split over G programs. ``block``/``warps`` override
    tiles.SOFTMAX_SPLIT (tiles.SOFTMAX_SPLIT_PIPELINED with ``pipelined``); ``two_launches``
    runs PHASE 1 + 2 (always, under the interpreter, when a row takes several programs);
    ``groups`` caps the persistent grid at G x groups programs (default: all that fit);
    ``pipelined`` runs the one launch as softmax_row_split_pipelined_kernel (the next row's
    segment loaded during this row's exchange), ``prefetch_at`` says where its loads are
    issued: "release" (after the release of the row's pair) or "top" (before the pair's
    arithmetic); ``load_hint`` ("", "evict_first", "cg") marks the segment loads
    (LOAD_HINTS); ``lean`` takes the exps by ex2.approx.ftz (_exp2_ftz: the sum's, and the
    output's for 16-bit outputs), as cuda/softmax_split.cu does by default; the interpreter
    runs tl.exp (it cannot run the inline instruction). ``exp_once`` keeps the exps of the
    pair's sum and rescales them for the output (_segment_exps, _rescaled: one exp per element
    where the others take two; the plain kernel only; 16-bit exps by _exp2_ftz, tl.exp2 under
    the interpreter). ``fallback``: a row that needs more
    programs than the GPU holds at once runs the two launches (else ValueError)."""
    _memory.check_float(NAME, x)
    if x.dim() == 0 or dim not in (-1, x.dim() - 1):
        raise ValueError(f"{NAME}: softmax over the last dimension only, got dim {dim} of a "
                         f"{x.dim()}-D tensor")
    if load_hint not in LOAD_HINTS:
        raise ValueError(f"{NAME}: load_hint must be one of {sorted(LOAD_HINTS)}, got "
                         f"{load_hint!r}")
    if prefetch_at not in ("release", "top") or (prefetch_at != "release" and not pipelined):
        raise ValueError(f"{NAME}: prefetch_at must be 'release' or 'top' (the latter with "
                         f"pipelined=True), got {prefetch_at!r} with pipelined={pipelined}")
    if exp_once and (pipelined or lean):
        raise ValueError(f"{NAME}: exp_once is an arithmetic of the plain loop; it cannot be "
                         f"combined with pipelined={pipelined} or lean={lean}")
    if pipelined and two_launches:
        raise ValueError(f"{NAME}: pipelined is the one-launch kernel; it cannot run as "
                         f"two_launches")
    _memory.check_device(NAME, x)
    x = x.contiguous()
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    n = x.shape[-1]
    rows = x.numel() // n
    block, warps, segments = config(x.element_size(), n, block, warps, pipelined)
    if n + block >= 2**31 or rows >= 2**31 - 2**16:
        raise ValueError(f"{NAME}: rows must be shorter than 2^31 - {block} elements and fewer "
                         f"than 2^31 - 2^16, got {rows} rows of {n}")
    vec = _memory.vector_width(x.dtype, x, y, row_elements=n)
    pairs = torch.empty((rows, segments, 2), dtype=torch.float32, device=x.device)
    count = torch.zeros(rows, dtype=torch.int32, device=x.device)
    cache, evict = LOAD_HINTS[load_hint]
    lean = lean and not _common.interpreting()
    meta = dict(BLOCK=block, SEGMENTS=segments, SEGMENTS_P2=triton.next_power_of_2(segments),
                VEC=vec, SPIN_LIMIT=SPIN_LIMIT, LOAD_CACHE=cache, LOAD_EVICT=evict,
                LEAN=lean, num_warps=warps)
    if exp_once:                              # (only the plain kernel takes them)
        meta.update(EXP_ONCE=True, FTZ=not _common.interpreting())
    args = (x, y, pairs, count, rows, n)
    interpreting = _common.interpreting()

    def in_two_launches():
        # any size (no program waits for another), within the grid limit of 2^31 - 1 programs
        grid = (segments * min(rows, 65535, max(1, (2**31 - 1) // segments)),)
        _common.launch(softmax_row_split_kernel, grid, *args, PHASE=1, **meta)
        _common.launch(softmax_row_split_kernel, grid, *args, PHASE=2, **meta)
        return y

    if two_launches or (interpreting and segments > 1):
        return in_two_launches()
    if pipelined:
        kernel = softmax_row_split_pipelined_kernel
        one_launch = dict(meta, PREFETCH_AT_TOP=prefetch_at == "top")
    else:
        kernel, one_launch = softmax_row_split_kernel, dict(meta, PHASE=0)
    if interpreting:
        resident = _common.INTERPRETER_SM_COUNT
    else:
        resident = _resident_for(kernel, args, one_launch, x.device)
    most = resident // segments
    if most < 1 and fallback:
        return in_two_launches()
    if most < 1:
        raise ValueError(f"{NAME}: a row of {n} elements needs {segments} programs running at "
                         f"once, the GPU holds {resident} of this kernel; use two_launches=True "
                         f"or a longer block")
    # at most rows groups: every program's first row (its group) exists (the pipelined prologue)
    grid = (segments * min(most, groups or most, rows),)
    _common.launch(kernel, grid, *args, **one_launch)
    return y


def _split_impl(x: torch.Tensor, dim: int) -> torch.Tensor:
    # Traced (torch.compile, opcheck: fake tensors), the two launches: the one-launch grid is
    # sized from the compiled kernel's registers (_resident_for), which a fake tensor cannot
    # compile; the graph then reads the row twice (3 N, like the online version).
    return softmax_split(x, dim, two_launches=_common.tracing((x,)), fallback=True)


def op():
    """torch.ops.cvt_triton.softmax_split(x, dim) (registered on first call): the plain
    one-launch exchange, tiles.SOFTMAX_SPLIT's segments, rows only (dim = the last); a row
    that needs more programs than the GPU holds at once takes the two launches."""
    return _common.register_op("softmax_split", _split_impl, derivative="softmax")
