"""A small RGB test image that the package draws itself (no downloads), for rgb_to_grey.

"A Practitioner's Guide to Triton" converts a photograph of a puppy that it downloads; this
project runs offline, so it draws its own picture instead, at that picture's size after resizing
(3 x 150 x 225, channels first as torchvision reads images):

    background   red rises left to right, green rises top to bottom, blue constant 64
    a white square and a black disc         (grey 255 and 0)
    three stripes of pure red, green, blue  (grey round(0.2989 * 255) = 76,
                                             round(0.5870 * 255) = 150, round(0.1140 * 255) = 29)

:func:`landmarks` says where those are and what grey they must become, so a test can check
a converter on a picture whose answer is known by eye, not only on random pixels.

    python -m bench.images grey.png [--height 150 --width 225] [--kernel triton_rgb_to_grey]

writes the picture and its grey version side by side (any registered rgb_to_grey kernel;
without a GPU the Triton twin runs through the interpreter).
"""
from __future__ import annotations

import argparse
import sys

GUIDE_SIZE = (150, 225)  # the Practitioner's Guide's puppy after tvf.resize(img, 150)


def _stripes(height: int, width: int):
    """Rows of the three colour stripes at the bottom: (red, green, blue) row ranges."""
    h = max(1, height // 12)
    top = height - 3 * h
    return (top, top + h), (top + h, top + 2 * h), (top + 2 * h, top + 3 * h)


def _square(height: int, width: int):
    side = max(2, min(height, width) // 4)
    r0, c0 = height // 8, width // 8
    return r0, r0 + side, c0, c0 + side


def _disc(height: int, width: int):
    radius = max(2, min(height, width) // 6)
    return height // 3, (3 * width) // 4, radius


def test_image(height: int = GUIDE_SIZE[0], width: int = GUIDE_SIZE[1], device: str = "cpu"):
    """The 3 x height x width uint8 picture (height, width >= 24)."""
    import torch

    if height < 24 or width < 24:
        raise ValueError(f"test_image: at least 24 x 24 pixels, got {height} x {width}")
    rows = torch.arange(height, dtype=torch.float32)[:, None].expand(height, width)
    cols = torch.arange(width, dtype=torch.float32)[None, :].expand(height, width)
    img = torch.stack([255 * cols / (width - 1), 255 * rows / (height - 1),
                       torch.full((height, width), 64.0)]).round()
    r0, r1, c0, c1 = _square(height, width)
    img[:, r0:r1, c0:c1] = 255
    cy, cx, radius = _disc(height, width)
    img[:, (rows - cy) ** 2 + (cols - cx) ** 2 <= radius**2] = 0
    for channel, (a, b) in enumerate(_stripes(height, width)):
        img[:, a:b, :] = 0
        img[channel, a:b, :] = 255
    return img.to(torch.uint8).to(device)


def landmarks(height: int = GUIDE_SIZE[0], width: int = GUIDE_SIZE[1]) -> dict[str, tuple]:
    """name -> (row, column, expected grey level) at the centre of each drawn shape."""
    r0, r1, c0, c1 = _square(height, width)
    cy, cx, _radius = _disc(height, width)
    (ra, rb), (ga, gb), (ba, bb) = _stripes(height, width)
    return {
        "white square": ((r0 + r1) // 2, (c0 + c1) // 2, 255),
        "black disc": (cy, cx, 0),
        "red stripe": ((ra + rb) // 2, width // 2, 76),
        "green stripe": ((ga + gb) // 2, width // 2, 150),
        "blue stripe": ((ba + bb) // 2, width // 2, 29),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.images", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", help="PNG file to write")
    p.add_argument("--height", type=int, default=GUIDE_SIZE[0])
    p.add_argument("--width", type=int, default=GUIDE_SIZE[1])
    p.add_argument("--kernel", default="triton_rgb_to_grey")
    args = p.parse_args(argv)

    from bench import device, plot_style, registry

    dev = device.setup()
    kernel = registry.get(args.kernel)
    ok, why = device.can_run(kernel, dev, "u8")
    if not ok:
        print(f"bench.images: {args.kernel} cannot run here: {why}", file=sys.stderr)
        return 2
    img = test_image(args.height, args.width, dev)
    grey = kernel.runner("u8")(img)
    plt = plot_style.pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(8, 3.2))
    a.imshow(img.permute(1, 2, 0).cpu().numpy())
    b.imshow(grey.cpu().numpy(), cmap="gray", vmin=0, vmax=255)
    for ax, title in ((a, f"test image, 3 x {args.height} x {args.width}"),
                      (b, f"{args.kernel}")):
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    fig.tight_layout()
    from bench.results import atomic_savefig

    atomic_savefig(fig, args.out, dpi=120)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
