"""Triton twin of cuda/copy.cu (out = x, any length), and the two wrong copies of
"A Practitioner's Guide to Triton".

  idea      the first example of the Practitioner's Guide ("Example 1: copy a tensor"):
            program pid copies elements pid * BLOCK ... pid * BLOCK + BLOCK - 1, masked at n.
            It is the bandwidth every other memory-bound kernel is compared with.
  mapping   as triton_impl/vector_add.py (one input instead of two): a program is the CUDA
            block of 256 threads x 4 vectors (cuda/memory_config.h, CVT_COPY_*, read through
            triton_impl/tiles.py), VEC from the same run-time alignment check, the n % VEC
            tail in the last program, streaming stores.
  traffic   reads n, writes n elements: compulsory = model = 2 n sizeof(T) bytes.
  precond.  float32 / float16 / bfloat16, any n >= 0, made contiguous by the wrapper.

  The Practitioner's Guide reaches the kernel above in three attempts; the first two are
  kept here, labelled wrong, so that the harness can show it catches them
  (tests/interpreter/test_memory_triton.py). They are registered as
  triton_copy_bug_offsets_ignore_pid and triton_copy_bug_pid_times_n, flagged
  deliberately_wrong in the registry and left out of every default selection.

    bug 1   offsets = tl.arange(0, BLOCK)             every program copies block 0 again:
                                                      elements past BLOCK are never written
    bug 2   offsets = pid * n + tl.arange(0, BLOCK)   program 1 starts at n, past the end, so
                                                      the mask switches it off entirely:
                                                      again only block 0 is written
    right   offsets = pid * BLOCK + tl.arange(0, BLOCK)

  Both bugs are invisible while n <= BLOCK (one program): the Practitioner's Guide used
  BLOCK = 2 to see them; the wrong wrappers use BLOCK = 1024 and the check shapes include
  n > 1024. The wrong wrappers keep its `torch.zeros_like` output, so an element nobody
  writes reads 0 even on the CPU, where the harness cannot poison the output with NaN.
  run       python -m bench check --kernels 'triton_copy*'          (the bugs FAIL, by design)
            TRITON_INTERPRET=1 python -m bench check --kernels 'triton_copy_bug*' --shapes 4099
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, _memory, tiles

NAME = "triton_copy"
BUG_BLOCK = 1024                      # the wrong copies' block (the Practitioner's Guide: 2)


@triton.jit
def copy_kernel(
    x_ptr, out_ptr,                           # pointers: x, out (n elements each)
    n,                                        # size
    BLOCK: tl.constexpr,                      # elements per program
    VEC: tl.constexpr,                        # 16 // element size if aligned, else 1
):
    pid = tl.program_id(0).to(tl.int64)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    n_body = n // VEC * VEC                   # whole vectors (i32 ok: n_body <= n)
    mask = offsets < n_body
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask, cache_modifier=".cs")
    if VEC > 1:                               # the n % VEC elements left: the last program
        if pid == tl.num_programs(0) - 1:
            tail = n_body + tl.arange(0, VEC)
            t_mask = tail < n
            tl.store(out_ptr + tail, tl.load(x_ptr + tail, mask=t_mask), mask=t_mask,
                     cache_modifier=".cs")


# --- the Practitioner's Guide's two wrong attempts (deliberately wrong: do not use) ---------

@triton.jit
def copy_bug_offsets_ignore_pid_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)             # BUG: the same offsets in every program
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def copy_bug_pid_times_n_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * n + tl.arange(0, BLOCK)   # BUG: pid * n instead of pid * BLOCK
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


def _check(name: str, x: torch.Tensor) -> torch.Tensor:
    _memory.check_float(name, x)
    _memory.check_device(name, x)
    return x.contiguous()


def params() -> dict[str, int]:
    """The CUDA block (cuda/memory_config.h): THREADS, VECTORS_PER_THREAD, num_warps."""
    return tiles.copy()


def copy(x: torch.Tensor) -> torch.Tensor:
    """A new tensor equal to x (contiguous)."""
    x = _check(NAME, x)
    out = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return out
    vec = _memory.vector_width(x.dtype, x, out)
    p = params()
    block = p["THREADS"] * p["VECTORS_PER_THREAD"] * vec
    _common.launch(copy_kernel, (_memory.launch_blocks(n, block),), x, out, n,
                   BLOCK=block, VEC=vec, num_warps=p["num_warps"])
    return out


def _copy_like_the_guide(kernel, name: str, x: torch.Tensor) -> torch.Tensor:
    """The wrapper of the Practitioner's Guide: zeros_like output, cdiv(n, BLOCK) programs,
    one launch."""
    x = _check(name, x)
    out = torch.zeros_like(x)
    n = x.numel()
    if n:
        kernel[(triton.cdiv(n, BUG_BLOCK),)](x, out, n, BLOCK=BUG_BLOCK)
    return out


def copy_bug_offsets_ignore_pid(x: torch.Tensor) -> torch.Tensor:
    """DELIBERATELY WRONG (the Practitioner's Guide's attempt 1): only the first BLOCK
    elements are copied."""
    return _copy_like_the_guide(copy_bug_offsets_ignore_pid_kernel,
                                "triton_copy_bug_offsets_ignore_pid", x)


def copy_bug_pid_times_n(x: torch.Tensor) -> torch.Tensor:
    """DELIBERATELY WRONG (the Practitioner's Guide's attempt 2): only the first BLOCK
    elements are copied."""
    return _copy_like_the_guide(copy_bug_pid_times_n_kernel, "triton_copy_bug_pid_times_n", x)


def _op_impl(x: torch.Tensor) -> torch.Tensor:
    return copy(x)


def op():
    """torch.ops.cvt_triton.copy(x) (registered on first call). The wrong copies are plain
    functions, not ops: nothing should compile a graph around them."""
    return _common.register_op("copy", _op_impl, derivative="identity")
