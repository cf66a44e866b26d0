"""Triton twins of the CUDA matmul ladder, and the Triton matmuls of Triton's
matrix-multiplication tutorial and the notebook "Meet Triton".

One module per kernel; each holds a private ``@triton.jit`` kernel and a wrapper that
checks, allocates and launches (see docs/triton_twins.md for the mapping CUDA <-> Triton):

    matmul_v1_naive            twin of cuda/matmul_v1_naive.cu (no twin of v1 coalesced: see there)
    matmul_v1_5_thread_tiling  twin of cuda/matmul_v1_5_thread_tiling.cu
    matmul_v2_register_tiling  twin of cuda/matmul_v2_register_tiling.cu
    matmul_v3_smem_tiling      twin of cuda/matmul_v3_smem_tiling.cu
    matmul_grouped             tl.dot blocked matmul, L2-grouped order (Triton's tutorial)
    matmul_autotuned           the same, autotuned per precision, fast on the H100
    matmul_batched             (..., m, k) @ (..., k, n), broadcasting, strided ("Meet Triton")
    debug                      interpreter helpers: check_tensors_gpu_ready, print_if, breakpoint_if

Importing this package (or any of its modules) does nothing: no op is registered and no
kernel is compiled until a function is called. Without a GPU, set TRITON_INTERPRET=1
before the first import of a kernel module (``bench.device.setup()`` does it).
"""
