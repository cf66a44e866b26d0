"""The backward of every CUDA op (torch.ops.cvt), registered when bindings.ops() loads them.

Every op of the matmul ladder (CVT_MATMUL_OPS, CVT_TENSOR_CORE_OPS and CVT_TF32_OPS of
cuda/matmul_config.h) is a matmul:
dA = dC Bᵀ and dB = Aᵀ dC by the same op, so a rung added to the list gets its backward
with nothing written here. The paths of CVT_SKINNY_OPS take only some shapes: their
backward's products run on what cuda_auto picks (bindings/auto.py). The memory-bound ops (CVT_MEMORY_OPS of cuda/memory_config.h)
say their kind in MEMORY below; an op of the list missing there is a KeyError at load, not
an op that silently has no gradient. The formulas are bindings/derivatives.py's, shared
with the Triton ops.
"""
from __future__ import annotations

from . import config, derivatives
from .config import NAMESPACE

# Memory-bound op -> its kind of derivative (bindings/derivatives.py); None: none exists.
MEMORY = {
    "vector_add": "add",
    "copy": "identity",
    "relu_dropout": "relu_dropout",
    "softmax_row_sram": "softmax",
    "softmax_online": "softmax",
    "softmax_split": "softmax",
    "rgb_to_grey": None,          # uint8 image in, uint8 grey out: nothing to differentiate
}

_registered: set[str] = set()


def kinds() -> dict[str, str | None]:
    """Every CUDA op and the kind of its derivative, in the headers' order."""
    return {**{op: "matmul" for op in (*config.MATMUL_OPS, *config.TENSOR_CORE_OPS,
                                        *config.TF32_OPS)},
            # the skinny path takes only M or N <= 16, and dB = Aᵀ g of a skinny product
            # is K x N: its products go to whatever cuda_auto picks for them
            **{op: "dispatched_matmul" for op in config.SKINNY_OPS},
            **{op: MEMORY[op] for op in config.MEMORY_OPS}}


def register(namespace: str = NAMESPACE) -> None:
    """Registers the backward of every op of kinds() once (the ops must already be loaded;
    `namespace` is cvt, or a stand-in library of the same ops in the CPU tests)."""
    if namespace in _registered:
        return
    for op, kind in kinds().items():
        derivatives.register(f"{namespace}::{op}", kind)
    _registered.add(namespace)
