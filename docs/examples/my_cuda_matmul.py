"""A matmul of your own in CUDA C++, built with torch.utils.cpp_extension and run by the
harness beside the built-in kernels (needs a GPU and a CUDA build of torch; docs/plugins.md):

    python -m bench check --plugin docs/examples/my_cuda_matmul.py --kernels 'my_cuda*'
    python -m bench time  --plugin docs/examples/my_cuda_matmul.py --kernels 'my_cuda*,cuda_v3*'

The kernel is the lecture's shared-memory tiling at its simplest: a 16 x 16 block computes
a 16 x 16 tile of C, staging 16 x 16 tiles of A and B in shared memory, one element of C
per thread. The source is compiled the first time the kernel runs (load_inline, ninja),
then cached by torch.
"""
import functools

from bench.families.matmul import models
from bench.plugins import kernel

TILE = 16

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

constexpr int TILE = 16;

// C[M, N] = A[M, K] @ B[K, N], float32, row-major; any N, K and M up to 65535 * TILE (zeros
// outside the matrices; the rows of blocks go on grid y, which CUDA caps at 65535 blocks: the
// suite's own kernels fold longer grids into y and z, cuda/common.cuh).
__global__ void my_cuda_matmul_kernel(const float* A, const float* B, float* C,
                                      int64_t M, int64_t N, int64_t K) {
  __shared__ float sA[TILE][TILE], sB[TILE][TILE];
  const int64_t row = blockIdx.y * (int64_t)TILE + threadIdx.y;
  const int64_t col = blockIdx.x * (int64_t)TILE + threadIdx.x;
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < K; k0 += TILE) {
    const int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    sA[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
    sB[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += sA[threadIdx.y][k] * sB[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.is_cuda() && b.is_cuda(), "my_cuda_matmul: A and B must be CUDA tensors");
  TORCH_CHECK(a.dtype() == torch::kFloat32 && b.dtype() == torch::kFloat32,
              "my_cuda_matmul: A and B must be float32");
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0),
              "my_cuda_matmul: shapes ", a.sizes(), " and ", b.sizes(), " do not multiply");
  c10::cuda::CUDAGuard guard(a.device());
  a = a.contiguous();
  b = b.contiguous();
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  if (M == 0 || N == 0) return c;
  dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  my_cuda_matmul_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
      a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), M, N, K);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return c;
}
"""


@functools.lru_cache(maxsize=None)
def _module():
    from torch.utils.cpp_extension import load_inline

    return load_inline(name="my_cuda_matmul", cpp_sources="torch::Tensor matmul(torch::Tensor a, torch::Tensor b);",
                       cuda_sources=CUDA_SOURCE, functions=["matmul"],
                       extra_cuda_cflags=["-O3"])


def _smem_model(shape, params):
    """The lecture's v3 with L = 16, S = 16 and one element per thread (V = 1)."""
    return models.matmul_v3(shape, {"L": TILE, "S": TILE, "V": 1, "precision": "fp32"})


@kernel(op="matmul", backend="cuda", precisions=("fp32",),
        summary="16 x 16 shared-memory tiles, one C element per thread (load_inline)",
        model=_smem_model, params={"L": TILE, "S": TILE, "V": 1},
        formula="global 2N³/16, shared 2N³")
def my_cuda_matmul(a, b):
    return _module().matmul(a, b)
