// GPU matmul v1, naive: one thread per element of C.
//
//   idea      thread (x, y) computes C[x][y] as the dot product of row x of A and
//             column y of B, exactly the lecture's first kernel.
//   mapping   x = blockIdx.x * blockDim.x + threadIdx.x indexes the ROW, as in the
//             lecture. Consecutive threads of a warp therefore own consecutive
//             rows: at every k they read A[x][k] from 32 different rows (K floats
//             apart, 32 sectors per request) and write C 32 rows apart. This is
//             the uncoalesced baseline; v1_coalesced swaps x and y and nothing else.
//   traffic   every in-range thread loads K elements of A and K of B:
//               global loads  = 2 * M * N * K elements   (lecture: 2N^3)
//               global stores = M * N
//             Out-of-range threads return before loading anything.
//   precond.  float32, row-major contiguous; any M, N, K >= 0. The column blocks go on
//             grid y, folded into (y, z) past 65535 blocks (fold_grid, block_y in
//             common.cuh), so the blocks past N in the last z may count past 2^31.
//   run       python -m bench check --kernels cuda_v1_naive --shapes 1000x999x37
//             build/matmul_driver v1_naive 1024 1024 1024   (CMake driver)
#include "common.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

__global__ void matmul_v1_naive_kernel(const float* __restrict__ A,
                                       const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;  // row of C
  const int64_t y = block_y() * blockDim.y + threadIdx.y;  // column of C (64-bit: see precond.)
  if (x >= M || y >= N) return;

  const float* a_row = A + static_cast<int64_t>(x) * K;  // 64-bit: x * K may pass 2^31
  float result = 0.0f;
  for (int k = 0; k < K; ++k) {
    result += a_row[k] * B[static_cast<int64_t>(k) * N + y];
  }
  C[static_cast<int64_t>(x) * N + y] = result;
}

cudaError_t launch_matmul_v1_naive(const float* A, const float* B, float* C,
                                   int64_t M, int64_t N, int64_t K, cudaStream_t stream) {
  if (M == 0 || N == 0) return cudaSuccess;
  const dim3 block(CVT_V1_BLOCK, CVT_V1_BLOCK);
  const int64_t gx = ceil_div(M, CVT_V1_BLOCK), gy = ceil_div(N, CVT_V1_BLOCK);
  dim3 grid;
  if (!fold_grid(gx, gy, &grid)) return cudaErrorInvalidConfiguration;
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError();
}

}  // namespace cvt
