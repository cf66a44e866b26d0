"""Fake (meta) kernels of the memory-bound CUDA ops (bindings/memory_ops.cpp), for torch.compile.

Each returns an empty tensor of the output's shape and dtype, after the checks the real op
makes that shapes and dtypes alone can tell, with the same messages, so a traced program
fails early and readably. Called from bindings/_fake.py's ``register()``. The limits (the
SRAM softmax's longest row, the grey image's columns per block) are cuda/memory_config.h's,
read through bindings/config.py.
"""
from __future__ import annotations

import torch

from . import config, precision
from .config import MAX_GRID_X, MAX_GRID_YZ, NAMESPACE

FLOAT_DTYPES = tuple(precision.torch_dtype(label) for label in precision.FLOATS)


def softmax_sram_max_n() -> int:
    """cuda/memory_launchers.h's kSoftmaxSramMaxN: the longest row softmax_row_sram takes."""
    return config.memory_params()["SOFTMAX_SRAM_MAX_N"]


def grey_columns_per_block() -> int:
    """cuda/memory_launchers.h's kGreyColumnsPerBlock: threads along a row x pixels each."""
    p = config.memory_params()
    return p["GREY_BX"] * p["GREY_PX"]

_registered = False


def _float(op: str, x: torch.Tensor) -> None:
    torch._check(x.dtype in FLOAT_DTYPES,
                 lambda: f"{op}: x must be float32, float16 or bfloat16, got {x.dtype}")
    torch._check(x.device.type == "cuda", lambda: f"{op}: x must be a CUDA tensor, got {x.device}")


def _vector_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    torch._check(x.dtype == y.dtype,
                 lambda: f"vector_add: x and y must have the same dtype, got {x.dtype} and {y.dtype}")
    _float("vector_add", x)
    torch._check(x.device == y.device, lambda: "vector_add: x and y must be on the same device, "
                 f"got {x.device} and {y.device}")
    torch._check(x.shape == y.shape, lambda: "vector_add: x and y must have the same shape "
                 f"(no broadcasting), got {tuple(x.shape)} and {tuple(y.shape)}")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _copy(x: torch.Tensor) -> torch.Tensor:
    _float("copy", x)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _relu_dropout(x: torch.Tensor, p: float, seed: int) -> torch.Tensor:
    _float("relu_dropout", x)
    torch._check(0.0 <= p < 1.0, lambda: f"relu_dropout: p must be in [0, 1), got {p}")
    torch._check(seed >= 0, lambda: f"relu_dropout: seed must be >= 0, got {seed}")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _softmax(op: str, sram: bool):
    def fake(x: torch.Tensor, dim: int) -> torch.Tensor:
        _float(op, x)
        torch._check(x.dim() >= 1, lambda: f"{op}: x must have at least one dimension, got a 0-D tensor")
        torch._check(-x.dim() <= dim < x.dim(), lambda: f"{op}: dim must be in "
                     f"[{-x.dim()}, {x.dim() - 1}] for a {x.dim()}-D tensor, got {dim}")
        if sram:
            max_n = softmax_sram_max_n()
            torch._check(x.shape[dim] <= max_n, lambda: f"{op}: a row of "
                         f"{x.shape[dim]} elements (dim {dim} of {list(x.shape)}) does not fit in "
                         f"SRAM: at most {max_n}; softmax_online takes rows of any "
                         f"length")
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    return fake


def _softmax_split(x: torch.Tensor, dim: int) -> torch.Tensor:
    op = "softmax_split"
    _float(op, x)
    torch._check(x.dim() >= 1, lambda: f"{op}: x must have at least one dimension, got a 0-D tensor")
    torch._check(-x.dim() <= dim < x.dim(), lambda: f"{op}: dim must be in "
                 f"[{-x.dim()}, {x.dim() - 1}] for a {x.dim()}-D tensor, got {dim}")
    torch._check(dim % x.dim() == x.dim() - 1, lambda: f"{op}: rows only: dim must be the last "
                 f"({x.dim() - 1} or -1) for a {x.dim()}-D tensor, got {dim}; softmax_online "
                 f"takes any dim")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _rgb_to_grey(img: torch.Tensor) -> torch.Tensor:
    torch._check(img.dtype == torch.uint8, lambda: f"rgb_to_grey: the image must be uint8, got {img.dtype}")
    torch._check(img.dim() == 3 and img.shape[0] == 3, lambda: "rgb_to_grey: the image must be "
                 f"3 x H x W (channels first, RGB), got shape {tuple(img.shape)}")
    torch._check(img.device.type == "cuda",
                 lambda: f"rgb_to_grey: the image must be a CUDA tensor, got {img.device}")
    h, w = img.shape[1], img.shape[2]
    rows, columns = config.memory_params()["GREY_BY"], grey_columns_per_block()
    row_blocks, column_blocks = -(-h // rows), -(-w // columns)
    torch._check(row_blocks <= MAX_GRID_X, lambda: f"rgb_to_grey: a {h} x {w} image needs "
                 f"{row_blocks} blocks along grid x (one per {rows} rows), more than the "
                 f"{MAX_GRID_X} CUDA allows: H must be <= {MAX_GRID_X * rows}")
    torch._check(column_blocks <= MAX_GRID_YZ**2, lambda: f"rgb_to_grey: a {h} x {w} image needs "
                 f"{column_blocks} blocks along grid y and z (one per {columns} columns), more "
                 f"than the {MAX_GRID_YZ} x {MAX_GRID_YZ} CUDA allows: W must be <= "
                 f"{MAX_GRID_YZ**2 * columns}")
    return img.new_empty((h, w))


FAKES = {
    "vector_add": _vector_add,
    "copy": _copy,
    "relu_dropout": _relu_dropout,
    "softmax_row_sram": _softmax("softmax_row_sram", sram=True),
    "softmax_online": _softmax("softmax_online", sram=False),
    "softmax_split": _softmax_split,
    "rgb_to_grey": _rgb_to_grey,
}


def register() -> None:
    """Registers the fake kernel of every op of CVT_MEMORY_OPS once (the ops must already be
    loaded). An op of the list without a fake kernel here is a KeyError, not a silent gap."""
    global _registered
    if _registered:
        return
    for op in config.MEMORY_OPS:
        torch.library.register_fake(f"{NAMESPACE}::{op}")(FAKES[op])
    _registered = True
