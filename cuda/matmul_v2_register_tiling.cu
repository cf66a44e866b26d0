// GPU matmul v2, register tiling: V x V accumulators, an outer product per k.
//
//   idea      C_thread = sum over k of (column k of A_strip) x (row k of B_strip):
//             per k, load V values of A and V values of B into registers and do
//             V*V multiply-adds with them. Every loaded value is used V times.
//   change    from v1.5: the loops are reordered so that k is outermost. Both A and
//             B values are now reused V-fold, not just A. Same accumulators, same
//             thread -> block mapping.
//   mapping   threadIdx.x -> column block, threadIdx.y -> row block (as v1.5).
//             Per k, a warp's B loads are V floats apart (V separate requests that
//             together cover the warp's columns); its A loads are a column of A,
//             K floats apart, shared by the 16 threads of one row of the block.
//   traffic   a thread whose block starts inside C loads, per k, one value of A for
//             each of its valid rows and one value of B for each valid column:
//               global loads  = M*K*ceil(N/V) + N*K*ceil(M/V) elements (lecture: 2N^3/V)
//               global stores = M * N
//             FFMAs = ceil(M/V)*ceil(N/V)*V*V*K (out-of-range lanes multiply zeros).
//   precond.  float32, row-major contiguous; any M, N, K >= 0;
//             the row blocks go on grid y, folded into (y, z) past 65535 blocks
//             (fold_grid, block_y in common.cuh).
//   params    V = CVT_V2_V, T x T threads per block (matmul_config.h).
//   run       python -m bench check --kernels cuda_v2* --shapes 1000x999x37
#include "common.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

template <int V>
__global__ void matmul_v2_register_tiling_kernel(const float* __restrict__ A,
                                                 const float* __restrict__ B,
                                                 float* __restrict__ C, int M, int N, int K) {
  const int64_t r0 = (block_y() * blockDim.y + threadIdx.y) * V;
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  if (r0 >= M || c0 >= N) return;

  float c[V][V] = {};
  float a[V], b[V];  // the V + V values of this k: registers, not memory
  for (int k = 0; k < K; ++k) {
#pragma unroll
    for (int i = 0; i < V; ++i) a[i] = (r0 + i < M) ? A[(r0 + i) * K + k] : 0.0f;
#pragma unroll
    for (int j = 0; j < V; ++j) b[j] = (c0 + j < N) ? B[static_cast<int64_t>(k) * N + c0 + j] : 0.0f;
#pragma unroll
    for (int i = 0; i < V; ++i) {
#pragma unroll
      for (int j = 0; j < V; ++j) c[i][j] += a[i] * b[j];  // outer product
    }
  }

#pragma unroll
  for (int i = 0; i < V; ++i) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      if (r0 + i < M && c0 + j < N) C[(r0 + i) * N + c0 + j] = c[i][j];
    }
  }
}

cudaError_t launch_matmul_v2_register_tiling(const float* A, const float* B, float* C,
                                             int64_t M, int64_t N, int64_t K,
                                             cudaStream_t stream) {
  constexpr int V = CVT_V2_V, T = CVT_V2_T;
  if (M == 0 || N == 0) return cudaSuccess;
  const int64_t gx = ceil_div(N, T * V), gy = ceil_div(M, T * V);
  dim3 grid;
  if (!fold_grid(gx, gy, &grid)) return cudaErrorInvalidConfiguration;
  matmul_v2_register_tiling_kernel<V><<<grid, dim3(T, T), 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError();
}

}  // namespace cvt
