"""Train a small MLP on the suite's own kernels, forward and backward.

    python docs/examples/train_mlp.py                      # CUDA kernels on a GPU, else Triton
    python docs/examples/train_mlp.py --backend triton     # Triton (the interpreter on a CPU)
    python docs/examples/train_mlp.py --backend torch      # the same steps in plain PyTorch
    python docs/examples/train_mlp.py --matmul triton_grouped --dropout 0.1

A two-layer perceptron (16 -> 32 -> 4) learns to classify 64 random points by the labels a
random linear "teacher" gives them. Every matmul, bias add, ReLU + dropout and softmax of
the forward pass is a kernel of bench.kernels (the lecture's v3 by default), and so is
every product of the backward pass: `loss.backward()` runs the backward formulas
registered for the ops (bindings/derivatives.py; docs/api.md, "Training with your own
kernels"). With dropout 0, the losses agree with `--backend torch` to float32 rounding.

Without a GPU, the Triton kernels run through Triton's interpreter (about a second of CPU
time per step at the default sizes; --points 16 is quicker); the CUDA kernels need a GPU.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

# Run as a script from a checkout: its packages come first (an installed copy needs nothing).
_CHECKOUT = Path(__file__).resolve().parents[2]
if (_CHECKOUT / "bench" / "kernels.py").exists():
    sys.path.insert(0, str(_CHECKOUT))

from bench import device, kernels  # noqa: E402


def layers(backend: str, matmul: str | None = None) -> dict:
    """The four functions of the model, from bench.kernels (or plain torch for "torch")."""
    if backend == "torch":
        return dict(matmul=torch.matmul, add=torch.add, softmax=torch.softmax,
                    relu_dropout=lambda x, p, seed: torch.nn.functional.dropout(x.relu(), p))
    return dict(matmul=kernels.get(matmul or f"{backend}_v3_smem_tiling"),
                add=kernels.get(f"{backend}_vector_add"),
                relu_dropout=kernels.get(f"{backend}_relu_dropout"),
                softmax=kernels.get(f"{backend}_softmax_online"))


def problem(points: int, features: int, classes: int, where: str, seed: int = 0):
    """Random points x and the labels of a random linear teacher: argmax(x W)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(points, features, generator=g)
    labels = (x @ torch.randn(features, classes, generator=g)).argmax(dim=1)
    return x.to(where), labels.to(where)


def parameters(features: int, hidden: int, classes: int, where: str, seed: int = 1):
    """W1, b1, W2, b2, scaled so that the first layer's outputs have unit variance."""
    g = torch.Generator().manual_seed(seed)
    w1 = torch.randn(features, hidden, generator=g) / features ** 0.5
    w2 = torch.randn(hidden, classes, generator=g) / hidden ** 0.5
    b1, b2 = torch.zeros(hidden), torch.zeros(classes)
    return [t.to(where).requires_grad_() for t in (w1, b1, w2, b2)]


def train(backend: str = "triton", steps: int = 20, lr: float = 0.5, dropout: float = 0.0,
          points: int = 64, features: int = 16, hidden: int = 32, classes: int = 4,
          matmul: str | None = None) -> list[float]:
    """Full-batch SGD; returns the loss before each step."""
    where = device.setup() if backend != "torch" else (
        "cuda" if torch.cuda.is_available() else "cpu")
    if backend == "cuda" and where != "cuda":
        raise SystemExit("train_mlp: --backend cuda needs a CUDA GPU; use --backend triton")
    f = layers(backend, matmul)
    x, labels = problem(points, features, classes, where)
    w1, b1, w2, b2 = params = parameters(features, hidden, classes, where)
    losses = []
    for step in range(steps):
        h = f["matmul"](x, w1)
        h = f["add"](h, b1.expand_as(h))        # the bias, broadcast: its gradient is summed
        h = f["relu_dropout"](h, dropout, step)  # a new mask every step; backward reuses it
        z = f["matmul"](h, w2)
        probs = f["softmax"](f["add"](z, b2.expand_as(z)), -1)
        loss = -probs.gather(1, labels[:, None]).log().mean()    # cross-entropy
        for p in params:
            p.grad = None
        loss.backward()                          # the ops' own backward kernels
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad
        losses.append(loss.item())
    return losses


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("cuda", "triton", "torch"),
                        default="cuda" if torch.cuda.is_available() else "triton")
    parser.add_argument("--matmul", help="a matmul of bench.kernels "
                        "(default: <backend>_v3_smem_tiling)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--points", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=32)
    args = parser.parse_args(argv)
    losses = train(args.backend, args.steps, args.lr, args.dropout, points=args.points,
                   hidden=args.hidden, matmul=args.matmul)
    for step, loss in enumerate(losses):
        if step % 5 == 0 or step == len(losses) - 1:
            print(f"step {step:3d}  loss {loss:.4f}")
    print(f"{args.backend}: loss {losses[0]:.4f} -> {losses[-1]:.4f} in {len(losses)} steps")


if __name__ == "__main__":
    main()
