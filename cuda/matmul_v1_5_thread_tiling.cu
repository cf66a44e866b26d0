// GPU matmul v1.5, thread tiling: each thread computes a V x V block of C, row by row.
//
//   idea      give each thread more output so that a value it loads is used more
//             than once. A thread owns rows r0..r0+V-1 and columns c0..c0+V-1 of C.
//   change    from v1_coalesced: one thread now covers V x V outputs instead of one.
//             For each of its V rows it walks k once, loads A[row][k] ONCE and uses
//             it for all V columns; B[k][col] is still loaded once per output.
//             (The lecture writes this as "load row x of A, then each column y of
//             B"; walking k in the middle gives the same loads without an N-float
//             array per thread.)
//   mapping   threadIdx.x -> column block (neighbour threads, neighbour columns:
//             the lesson of v1_coalesced is kept), threadIdx.y -> row block.
//   traffic   a thread whose block starts inside C loads, per valid row, K values
//             of A, and per valid (row, column), K values of B:
//               global loads  = M*K*ceil(N/V) + M*N*K elements  (lecture: N^3/V + N^3)
//               global stores = M * N
//             The A term shrank V-fold from v1; the B term did not move, so v1.5
//             still reads about N^3 elements: the motivation for v2.
//   precond.  float32, row-major contiguous; any M, N, K >= 0;
//             the row blocks go on grid y, folded into (y, z) past 65535 blocks
//             (fold_grid, block_y in common.cuh).
//   params    V = CVT_V1_5_V, T x T threads per block (matmul_config.h).
//   run       python -m bench check --kernels cuda_v1.5* --shapes 1000x999x37
#include "common.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

template <int V>
__global__ void matmul_v1_5_thread_tiling_kernel(const float* __restrict__ A,
                                                 const float* __restrict__ B,
                                                 float* __restrict__ C, int M, int N, int K) {
  const int64_t r0 = (block_y() * blockDim.y + threadIdx.y) * V;
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  if (r0 >= M || c0 >= N) return;  // this thread's block lies entirely outside C

  float c[V][V] = {};  // V*V accumulators; every index below is a compile-time constant
#pragma unroll
  for (int x = 0; x < V; ++x) {  // one row of the thread's block at a time
    if (r0 + x < M) {
      const float* a_row = A + (r0 + x) * K;
      for (int k = 0; k < K; ++k) {
        const float a = a_row[k];  // loaded once ...
        const float* b_row = B + static_cast<int64_t>(k) * N + c0;
#pragma unroll
        for (int y = 0; y < V; ++y) {
          if (c0 + y < N) c[x][y] += a * b_row[y];  // ... used V times; b once per output
        }
      }
    }
  }

#pragma unroll
  for (int x = 0; x < V; ++x) {
#pragma unroll
    for (int y = 0; y < V; ++y) {
      if (r0 + x < M && c0 + y < N) C[(r0 + x) * N + c0 + y] = c[x][y];
    }
  }
}

cudaError_t launch_matmul_v1_5_thread_tiling(const float* A, const float* B, float* C,
                                             int64_t M, int64_t N, int64_t K,
                                             cudaStream_t stream) {
  constexpr int V = CVT_V1_5_V, T = CVT_V1_5_T;
  if (M == 0 || N == 0) return cudaSuccess;
  const int64_t gx = ceil_div(N, T * V), gy = ceil_div(M, T * V);
  dim3 grid;
  if (!fold_grid(gx, gy, &grid)) return cudaErrorInvalidConfiguration;
  matmul_v1_5_thread_tiling_kernel<V><<<grid, dim3(T, T), 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError();
}

}  // namespace cvt
