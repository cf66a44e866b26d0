"""Triton twin of cuda/rgb_to_grey.cu: grey = round(0.2989 R + 0.5870 G + 0.1140 B), uint8.

  idea      the 2-D example of "A Practitioner's Guide to Triton" ("Example 2"), as there:
            a 2-D grid, program (pid_0, pid_1) owns rows pid_0 * BLOCK_H + arange(BLOCK_H) and
            columns pid_1 * BLOCK_W + arange(BLOCK_W); offsets w * rows[:, None] + cols[None, :]
            and the mask (rows < h)[:, None] & (cols < w)[None, :] make the 2-D tile; the three
            planes are the same offsets plus 0, h w and 2 h w.
  change    from the Practitioner's Guide: the tile is 8 x 512 (the CUDA block: 8 rows of
            32 threads x 16 pixels, num_warps = 8; cuda/memory_config.h, CVT_GREY_*, read
            through triton_impl/tiles.py) instead of 32 x 32, so a row of the tile is 512
            contiguous bytes; the values are converted to float32 before the weights (the
            Practitioner's Guide notes that the interpreter rejects float * uint8); the
            result is rounded (v + 0.5, then the float -> uint8 conversion truncates), where
            the Practitioner's Guide truncates and turns white into 254. Offsets are int64
            (pid_0 * BLOCK_H * w and the planes at h w, 2 h w pass 2^31 for big images:
            tests/gpu/test_large_offsets.py).
  traffic   reads 3 H W bytes, writes H W bytes: compulsory = model = 4 H W bytes.
  precond.  uint8, 3 x H x W (channels first, RGB), any H, W >= 0, made contiguous by the
            wrapper; W <= 65535 * 512 (grid axis 1). 16-byte accesses when W is a multiple
            of 16 (Triton's own specialisation of integer arguments: the same condition as
            the CUDA twin's vector path).
  run       python -m bench check --kernels '*rgb_to_grey' --shapes 3x150x225,3x1066x1600
            python -m bench.images grey.png     (the package's test image, before and after)
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from triton_impl import _common, _memory, tiles

NAME = "triton_rgb_to_grey"


@triton.jit
def rgb_to_grey_kernel(
    img_ptr, grey_ptr,                        # pointers: image (3 x h x w), grey (h x w), uint8
    h, w,                                     # sizes
    BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr,  # the tile: rows x columns per program
):
    pid_0 = tl.program_id(0).to(tl.int64)
    pid_1 = tl.program_id(1).to(tl.int64)
    rows = pid_0 * BLOCK_H + tl.arange(0, BLOCK_H)         # 1-D vectors ...
    cols = pid_1 * BLOCK_W + tl.arange(0, BLOCK_W)
    offs = w * rows[:, None] + cols[None, :]                # ... a 2-D tile of offsets
    mask = (rows < h)[:, None] & (cols < w)[None, :]        # ... and of masks
    # int64: 2 h w passes 2^31 for big images (tl.cast: an h of 1 arrives as a constexpr)
    plane = tl.cast(h, tl.int64) * w
    r = tl.load(img_ptr + offs, mask=mask).to(tl.float32)
    g = tl.load(img_ptr + plane + offs, mask=mask).to(tl.float32)
    b = tl.load(img_ptr + 2 * plane + offs, mask=mask).to(tl.float32)
    v = 0.2989 * r + 0.5870 * g + 0.1140 * b                # in [0, 254.97]
    tl.store(grey_ptr + offs, (v + 0.5).to(tl.uint8), mask=mask, cache_modifier=".cs")


def params() -> dict[str, int]:
    """The CUDA block (cuda/memory_config.h): BLOCK_H rows x BLOCK_W columns, num_warps."""
    return tiles.rgb_to_grey()


def rgb_to_grey(img: torch.Tensor) -> torch.Tensor:
    """The grey H x W uint8 image of a 3 x H x W uint8 RGB image."""
    _memory.check_tensor(NAME, img, "the image")
    if img.dtype != torch.uint8:
        raise TypeError(f"{NAME}: the image must be uint8, got {_memory.dtype_name(img.dtype)}")
    if img.dim() != 3 or img.shape[0] != 3:
        raise ValueError(f"{NAME}: the image must be 3 x H x W (channels first, RGB), got shape "
                         f"{tuple(img.shape)}")
    _memory.check_device(NAME, img)
    img = img.contiguous()
    h, w = img.shape[1], img.shape[2]
    grey = torch.empty((h, w), dtype=torch.uint8, device=img.device)
    if grey.numel() == 0:
        return grey
    p = params()
    grid = (triton.cdiv(h, p["BLOCK_H"]), triton.cdiv(w, p["BLOCK_W"]))
    _common.check_grid(NAME, grid, f"a {h} x {w} image")
    _common.launch(rgb_to_grey_kernel, grid, img, grey, h, w, BLOCK_H=p["BLOCK_H"],
                   BLOCK_W=p["BLOCK_W"], num_warps=p["num_warps"])
    return grey


def rgb_to_grey_bug_tail_unwritten(img: torch.Tensor) -> torch.Tensor:
    """DELIBERATELY WRONG: the grid rounds the columns down (w // BLOCK_W blocks instead of
    cdiv), so the last partial block of columns is never written (and an image narrower
    than one block not at all)."""
    img = img.contiguous()
    h, w = img.shape[1], img.shape[2]
    grey = torch.empty((h, w), dtype=torch.uint8, device=img.device)
    p = params()
    grid = (triton.cdiv(h, p["BLOCK_H"]), w // p["BLOCK_W"])      # BUG: rounds down
    if h and grid[1]:
        _common.launch(rgb_to_grey_kernel, grid, img, grey, h, w, BLOCK_H=p["BLOCK_H"],
                       BLOCK_W=p["BLOCK_W"], num_warps=p["num_warps"])
    return grey


def _op_impl(img: torch.Tensor) -> torch.Tensor:
    return rgb_to_grey(img)


def op():
    """torch.ops.cvt_triton.rgb_to_grey(img) (registered on first call)."""
    return _common.register_op("rgb_to_grey", _op_impl, derivative=None)  # uint8: no gradient
