// Lab 1 in CUDA, the reference solution: every test passes (tests/cpu/test_labs.py checks it).
#include <cuda_runtime.h>

constexpr int BLOCK = 256;  // threads per block, one element each

__global__ void vector_add_kernel(const float* x, const float* y, float* out, long n) {
  long i = static_cast<long>(blockIdx.x) * BLOCK + threadIdx.x;
  if (i < n) {
    out[i] = x[i] + y[i];
  }
}

void vector_add(const float* x, const float* y, float* out, long n) {
  const long blocks = (n + BLOCK - 1) / BLOCK;
  if (blocks > 0) {
    vector_add_kernel<<<blocks, BLOCK>>>(x, y, out, n);
  }
}
