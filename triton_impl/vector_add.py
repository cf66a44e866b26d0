"""Triton twin of cuda/vector_add.cu: out = x + y, element by element, any length.

  idea      the lecture's Figure 5 (`_add`), the first Triton kernel of the notes: a program
            owns BLOCK consecutive elements, `offsets = pid * BLOCK + tl.arange(0, BLOCK)`
            are its element indices, a mask `offsets < n` keeps the last program inside the
            arrays, and three vector operations (load, add, store) replace the CUDA thread's
            scalar code. Two fixes to the figure as printed: its store has no mask (the last
            program writes past the end of z whenever n is not a multiple of BLOCK), and
            its mask names `offset`, not `offsets`.
  mapping   CUDA (cuda/vector_add.cu)             this file
            block of 256 threads, 4 vectors each  one program of BLOCK = 256 * 4 * VEC
                                                  elements, num_warps = 8 (256 threads)
            2 vectors each when 4 would give      the same rule: BLOCK = 256 * 2 * VEC when
              fewer blocks than the GPU has SMs     cdiv(n, 256 * 4 * VEC) < the SM count
            Vec<T, VEC>: one 16-byte access       the compiler's choice: 16 bytes per access
                                                  when it can prove 16-byte alignment
            run-time alignment check (launcher)   the same check in the wrapper; VEC is a
                                                  constexpr, and the mask bound is rounded
                                                  down to whole vectors so the compiler sees
                                                  that no vector is cut (triton_impl/_memory.py)
            scalar tail (n % VEC), block 0        the same tail, in the last program
            __stcs streaming stores               cache_modifier=".cs"
  params    256 threads, 4 and 2 vectors: cuda/memory_config.h (CVT_ADD_*), read through
            triton_impl/tiles.py, never copied; the SM count is the device's
            (_common.sm_count).
  traffic   reads 2n, writes n elements, each once: compulsory = model = 3 n sizeof(T) bytes.
  precond.  float32 / float16 / bfloat16, same dtype and shape (no broadcasting), any n >= 0;
            inputs made contiguous by the wrapper; offsets in int64 (n past 2^31 is fine).
  run       python -m bench check --kernels triton_vector_add --shapes 1,7,1000003
            python -m bench time --kernels '*vector_add' --precision fp32
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, _memory, tiles

NAME = "triton_vector_add"


@triton.jit
def vector_add_kernel(
    x_ptr, y_ptr, out_ptr,                    # pointers: x, y, out (n elements each)
    n,                                        # size
    BLOCK: tl.constexpr,                      # elements per program
    VEC: tl.constexpr,                        # 16 // element size if aligned, else 1
):
    pid = tl.program_id(0).to(tl.int64)       # int64: pid * BLOCK may pass 2^31
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    n_body = n // VEC * VEC                   # whole vectors, no mask straddles one (i32 ok: <= n)
    mask = offsets < n_body
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    z = (x.to(tl.float32) + y.to(tl.float32)).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + offsets, z, mask=mask, cache_modifier=".cs")
    if VEC > 1:                               # the n % VEC elements left: the last program
        if pid == tl.num_programs(0) - 1:
            tail = n_body + tl.arange(0, VEC)
            t_mask = tail < n
            xt = tl.load(x_ptr + tail, mask=t_mask)
            yt = tl.load(y_ptr + tail, mask=t_mask)
            zt = (xt.to(tl.float32) + yt.to(tl.float32)).to(out_ptr.dtype.element_ty)
            tl.store(out_ptr + tail, zt, mask=t_mask, cache_modifier=".cs")


def params() -> dict[str, int]:
    """The CUDA block (cuda/memory_config.h): THREADS, VECTORS_PER_THREAD(_SMALL), num_warps."""
    return tiles.vector_add()


def vector_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x + y for two tensors of one float dtype and one shape."""
    _memory.check_float(NAME, x)
    _memory.check_tensor(NAME, y, "y")
    if x.dtype != y.dtype:
        raise TypeError(f"{NAME}: x and y must have the same dtype, got "
                        f"{_memory.dtype_name(x.dtype)} and {_memory.dtype_name(y.dtype)}")
    _memory.check_device(NAME, x, y)
    if x.shape != y.shape:
        raise ValueError(f"{NAME}: x and y must have the same shape (no broadcasting), got "
                         f"{tuple(x.shape)} and {tuple(y.shape)}")
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return out
    vec = _memory.vector_width(x.dtype, x, y, out)
    p = params()
    block = p["THREADS"] * p["VECTORS_PER_THREAD"] * vec
    if _memory.launch_blocks(n, block) < _common.sm_count(x.device):
        block = p["THREADS"] * p["VECTORS_PER_THREAD_SMALL"] * vec
    _common.launch(vector_add_kernel, (_memory.launch_blocks(n, block),), x, y, out, n,
                   BLOCK=block, VEC=vec, num_warps=p["num_warps"])
    return out


def _op_impl(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return vector_add(x, y)


def op():
    """torch.ops.cvt_triton.vector_add(x, y) (registered on first call)."""
    return _common.register_op("vector_add", _op_impl, derivative="add")
