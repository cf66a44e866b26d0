"""Accident: takes its process down (as an illegal address takes down a CUDA context)."""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import signal  # noqa: E402


def vector_add(x, y):
    os.kill(os.getpid(), signal.SIGSEGV)
