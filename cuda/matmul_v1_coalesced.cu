// GPU matmul v1, coalesced: v1 naive with the thread -> (row, column) map swapped.
//
//   idea      the same dot product per thread as v1 naive; only the mapping changes.
//   change    x = blockIdx.x * blockDim.x + threadIdx.x now indexes the COLUMN.
//             The 32 threads of a warp share one row: at every k they read the
//             same A[row][k] (one broadcast) and 32 consecutive floats of row k of
//             B (one 128-byte request), and they write 128 contiguous bytes of C.
//             Same instructions, same load count, a fraction of the sectors.
//   traffic   global loads  = 2 * M * N * K elements (identical to v1 naive)
//             global stores = M * N
//             What changes is below the model: L1 sectors requested per load.
//   precond.  float32, row-major contiguous; any M, N, K >= 0. The row blocks go on
//             grid y, folded into (y, z) past 65535 blocks (fold_grid, block_y in
//             common.cuh), so the blocks past M in the last z may count past 2^31.
//   run       python -m bench check --kernels cuda_v1_coalesced --shapes 1000x999x37
#include "common.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

__global__ void matmul_v1_coalesced_kernel(const float* __restrict__ A,
                                           const float* __restrict__ B,
                                           float* __restrict__ C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;  // neighbours in a warp: neighbour columns
  const int64_t row = block_y() * blockDim.y + threadIdx.y;  // 64-bit: see precond.
  if (row >= M || col >= N) return;

  const float* a_row = A + static_cast<int64_t>(row) * K;
  float result = 0.0f;
  for (int k = 0; k < K; ++k) {
    result += a_row[k] * B[static_cast<int64_t>(k) * N + col];
  }
  C[static_cast<int64_t>(row) * N + col] = result;
}

cudaError_t launch_matmul_v1_coalesced(const float* A, const float* B, float* C,
                                       int64_t M, int64_t N, int64_t K, cudaStream_t stream) {
  if (M == 0 || N == 0) return cudaSuccess;
  const dim3 block(CVT_V1_BLOCK, CVT_V1_BLOCK);
  const int64_t gx = ceil_div(N, CVT_V1_BLOCK), gy = ceil_div(M, CVT_V1_BLOCK);
  dim3 grid;
  if (!fold_grid(gx, gy, &grid)) return cudaErrorInvalidConfiguration;
  matmul_v1_coalesced_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError();
}

}  // namespace cvt
