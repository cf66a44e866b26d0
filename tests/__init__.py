"""The tests, one tier per folder (conftest.py marks and skips them by folder):

    cpu/          every machine, GPU or not; no Triton kernel runs here
    interpreter/  Triton kernels through TRITON_INTERPRET=1, on machines without a GPU
    gpu/          needs a CUDA GPU
    support/      shared helpers and data, not tests

INDEX.md lists the tests of every registry kernel. A package, so that `tests.support`
imports the same way from every folder; nothing outside tests/ imports it.
"""
