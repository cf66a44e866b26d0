"""The one precision table: every precision label the suite prints, and what it means.

Every result row, legend and error bound names one of these labels. The kernels (cuda/
through the bindings, triton_impl/), the harness (bench/) and the tests read dtypes,
element sizes and rounding units from here and nowhere else. Nothing is imported at import
time: the torch dtype is looked up by name when asked for.

    label  inputs as stored   arithmetic                       unit roundoff u of
                                                               the inputs    the output
    fp32   float32            IEEE FFMA on CUDA cores          2^-24         2^-24
    tf32   float32            tensor cores, inputs cut to      2^-11         2^-24
                              TF32 (10-bit mantissa)
    fp16   float16            tensor cores, fp32 accumulate    2^-11         2^-11
    bf16   bfloat16           tensor cores, fp32 accumulate    2^-8          2^-8
    u8     uint8 (images)     float32 arithmetic               -             0.5 (a grey level)

The unit roundoff is half the distance from 1 to the next number (2^-p for p bits of
significand including the hidden one): the error bounds of bench/families are written in it.
"""
from __future__ import annotations

from dataclasses import dataclass

ACCUMULATOR_ROUNDOFF = 2.0**-24    # every tensor-core and FFMA path accumulates in float32


@dataclass(frozen=True)
class Precision:
    label: str
    dtype: str                # torch dtype name of the inputs and the output ("float32")
    element_bytes: int
    input_roundoff: float     # u of an input as the hardware multiplies it
    output_roundoff: float    # u of the stored output (0.5 for uint8: half a level)
    tensor_cores: bool
    meaning: str

    def torch_dtype(self):
        import torch

        return getattr(torch, self.dtype)


TABLE: dict[str, Precision] = {p.label: p for p in (
    Precision("fp32", "float32", 4, 2.0**-24, 2.0**-24, False,
              "float32 inputs, IEEE FFMA arithmetic (no tensor cores, TF32 off)"),
    Precision("tf32", "float32", 4, 2.0**-11, 2.0**-24, True,
              "float32 inputs rounded to TF32 on tensor cores, float32 accumulate"),
    Precision("fp16", "float16", 2, 2.0**-11, 2.0**-11, True,
              "float16 inputs on tensor cores, float32 accumulate, float16 output"),
    Precision("bf16", "bfloat16", 2, 2.0**-8, 2.0**-8, True,
              "bfloat16 inputs on tensor cores, float32 accumulate, bfloat16 output"),
    Precision("u8", "uint8", 1, 0.5, 0.5, False,
              "uint8 data (images), float32 arithmetic"),
)}

MATMUL = ("fp32", "tf32", "fp16", "bf16")     # the labels a matmul can be asked for
FLOATS = ("fp32", "fp16", "bf16")             # the float storage types of elementwise ops


def get(label: str) -> Precision:
    try:
        return TABLE[label]
    except KeyError:
        raise KeyError(f"precision: unknown label {label!r}; known: "
                       f"{', '.join(TABLE)}") from None


def element_bytes(label: str) -> int:
    return get(label).element_bytes


def torch_dtype(label: str):
    return get(label).torch_dtype()


def label_of(dtype) -> str | None:
    """The label a tensor of this dtype stands for when none is given: the first of the
    table with that storage type (float32 -> fp32, not tf32), or None."""
    name = dtype_name(dtype)
    return next((p.label for p in TABLE.values() if p.dtype == name), None)


def dtype_name(dtype) -> str:
    """"float32" for torch.float32: how error messages name a tensor's dtype."""
    return str(dtype).replace("torch.", "")
