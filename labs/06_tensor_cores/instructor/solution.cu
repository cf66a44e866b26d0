// Lab 6, the reference solution: every test passes (tests/cpu/test_labs.py checks it on the
// CPU emulator, tests/gpu/test_labs_gpu.py on a GPU).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cvt_lab_mma.cuh"

constexpr int TILE_M = 16;  // one warp computes a TILE_M x TILE_N tile of C
constexpr int TILE_N = 8;

__global__ void mma_matmul_kernel(const __half* a, const __half* b, __half* c, long M, long N,
                                  long K) {
  const long row0 = static_cast<long>(blockIdx.y) * TILE_M;
  const long col0 = static_cast<long>(blockIdx.x) * TILE_N;
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  // A(row, k) and B(k, col), 0 outside the matrices (lambdas: a and b stay the kernel's own
  // pointers, which the CPU emulator counts)
  const auto a_at = [&](long row, long k) {
    return row < M && k < K ? __half(a[row * K + k]) : __float2half_rn(0.0f);
  };
  const auto b_at = [&](long k, long col) {
    return k < K && col < N ? __half(b[k * N + col]) : __float2half_rn(0.0f);
  };
  for (long k0 = 0; k0 < K; k0 += 16) {
    unsigned af[4], bf[2];
    for (int i = 0; i < 4; ++i) {            // a[i]: rows g (+8 for i odd), k 2t (+8 for i >= 2)
      const long row = row0 + g + 8 * (i % 2), k = k0 + 2 * t + 8 * (i / 2);
      af[i] = cvt_lab::pack(a_at(row, k), a_at(row, k + 1));
    }
    for (int i = 0; i < 2; ++i) {            // b[i]: k 2t (+8 for i = 1), column g
      const long k = k0 + 2 * t + 8 * i, col = col0 + g;
      bf[i] = cvt_lab::pack(b_at(k, col), b_at(k + 1, col));
    }
    cvt_lab::mma_m16n8k16(d, af, bf);
  }
  for (int i = 0; i < 4; ++i) {              // d[i]: row g (+8 for i >= 2), column 2t + i % 2
    const long row = row0 + g + 8 * (i / 2), col = col0 + 2 * t + i % 2;
    if (row < M && col < N) {
      c[row * N + col] = __float2half_rn(d[i]);
    }
  }
}

void matmul(const __half* a, const __half* b, __half* c, long M, long N, long K) {
  if (M == 0 || N == 0) {
    return;
  }
  const dim3 grid((N + TILE_N - 1) / TILE_N, (M + TILE_M - 1) / TILE_M);
  mma_matmul_kernel<<<grid, 32>>>(a, b, c, M, N, K);
}
