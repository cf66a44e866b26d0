"""Interpreter tier: Triton kernels through TRITON_INTERPRET=1 on machines without a GPU."""
