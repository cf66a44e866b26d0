"""What every memory-bound Triton wrapper checks before it launches (the twins of the checks in
bindings/memory_ops.cpp), and the one run-time decision they share with their CUDA twins.

Messages name the op, the expectation and the actual value:

    triton_vector_add: x must be float32, float16 or bfloat16, got int64

The run-time decision: 16-byte accesses. The CUDA launchers check pointer alignment and pick
VEC = 16 / sizeof(T) or 1. Triton decides vector widths at compile time from what it can
prove: it specialises every pointer argument that is 16-byte aligned and every integer that
is a multiple of 16, and nothing else. A row that starts at `row * n` with n = 3000, or a
mask `offs < n` with n = 1000003, defeats that proof, and the loads fall back to 4 bytes.
The wrappers therefore make the same run-time check as CUDA (:func:`vector_width`) and pass
VEC as a constexpr; the kernels then state the facts the check established with
``tl.multiple_of(pointer, 16)`` and a mask bound rounded down to whole vectors, which the
compiler turns into 16-byte accesses (verified in the generated PTX, ld.global.v4).
"""
from __future__ import annotations

import torch

from bindings import precision
from triton_impl import _common

FLOAT_DTYPES = tuple(precision.torch_dtype(label) for label in precision.FLOATS)


def dtype_name(dtype: torch.dtype) -> str:
    return precision.dtype_name(dtype)


def check_tensor(op: str, x, what: str = "x") -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{op}: {what} must be a torch.Tensor, got {type(x).__name__}")


def check_float(op: str, x: torch.Tensor, what: str = "x") -> None:
    check_tensor(op, x, what)
    if x.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{op}: {what} must be float32, float16 or bfloat16, got {dtype_name(x.dtype)}")


def check_device(op: str, *tensors: torch.Tensor) -> None:
    """One device: the current CUDA device, or the CPU under the interpreter."""
    _common.check_device(op, *tensors, what="x" if len(tensors) == 1 else "the inputs")


def aligned16(t: torch.Tensor) -> bool:
    """Whether t's first element sits on a 16-byte boundary. Under torch.compile the wrapper
    is traced with fake tensors, which have no address: then the storage offset decides
    (PyTorch's allocators start every storage on a 16-byte boundary, or more). A fake
    tensor's data_ptr() is refused by some PyTorch releases and only warned about (then
    meaningless) by others, so it is never asked."""
    from torch._subclasses.fake_tensor import is_fake

    if not is_fake(t):
        try:
            return t.data_ptr() % 16 == 0
        except RuntimeError:  # "Cannot access data pointer of Tensor (e.g. FakeTensor ...)"
            pass
    return (t.storage_offset() * t.element_size()) % 16 == 0


def padded16(n: int, elem: int) -> int:
    """n rounded up so that n * elem is a multiple of 16 bytes (TMA's stride rule)."""
    per16 = 16 // elem
    return (n + per16 - 1) // per16 * per16


def stack_strides(t: torch.Tensor) -> tuple[int, int, int, int]:
    """(batch step, batch stride, row stride, inner stride) of a stack of matrices t (batch
    x rows x cols) as a TMA descriptor takes them. A dimension of size 1 is never stepped,
    so its stride is free: the inner one becomes 1, the row one a 16-byte multiple. A batch
    of one matrix (size 1, or stride 0: a broadcast operand) is described as a stack of
    one, step 0 (every product reads batch coordinate 0)."""
    batch, rows, cols = t.shape
    s_b, s_r, s_c = t.stride()
    s_c = 1 if cols == 1 else s_c
    s_r = padded16(cols, t.element_size()) if rows == 1 else s_r
    if batch == 1 or s_b == 0:
        return 0, rows * s_r, s_r, s_c
    return 1, s_b, s_r, s_c


def tma_compatible(t: torch.Tensor) -> bool:
    """True if the stack t (batch x rows x cols) can be read or written by TMA as it is:
    unit inner stride, row and batch strides positive multiples of 16 bytes (or free, see
    stack_strides), base 16-byte aligned."""
    if t.dim() != 3 or t.numel() == 0:
        return False
    _step, s_b, s_r, s_c = stack_strides(t)
    e = t.element_size()
    return (s_c == 1 and s_r > 0 and s_b > 0 and (s_r * e) % 16 == 0 and (s_b * e) % 16 == 0
            and aligned16(t))                    # never a fake tensor's address


def vector_width(dtype: torch.dtype, *tensors: torch.Tensor, row_elements: int | None = None) -> int:
    """16 / element size if every tensor starts on a 16-byte boundary (and, for row-wise
    kernels, every row does: row_elements * element size is a multiple of 16), else 1."""
    size = dtype.itemsize
    vec = 16 // size
    aligned = all(aligned16(t) for t in tensors)
    if row_elements is not None:
        aligned = aligned and (row_elements * size) % 16 == 0
    return vec if aligned else 1


def launch_blocks(n: int, block: int) -> int:
    return max(1, (n + block - 1) // block)
