// GPU matmul v3, shared-memory + register tiling with cooperative fetching.
//
//   idea      two levels of tiling. A block computes an L x L tile of C. It walks k
//             in steps of S: its threads together copy an L x S tile of A and an
//             S x L tile of B into shared memory (cooperative fetching), then each
//             of its (L/V)^2 threads does v2's outer products on a V x V block, but
//             reading a and b from shared memory instead of global memory.
//   change    from v2: global loads are now shared by the whole block (each value
//             read from global memory serves L/V threads), and the per-k loads of
//             v2 become shared-memory loads. Two __syncthreads per step, placed as
//             in the lecture: before the copy (nobody still reads the old tile) and
//             after it (nobody reads a tile that is half written).
//   fetching  every thread copies L*S/(L/V)^2 elements of each tile. Consecutive
//             threads take consecutive k of one row of A (a warp reads 4 rows x 32
//             bytes with S = 8) and consecutive columns of one row of B (128-byte
//             requests). A is stored transposed, sA[k][m], so that a thread's V
//             values of A are contiguous (one 16-byte shared load per 4 values);
//             each sA row is padded by 4 floats so that the transposing stores of a
//             warp fall in 32 different banks.
//   traffic   global loads (thread-issued, masked elements issue nothing):
//               A: each of the ceil(N/L) block columns reads all of A   = M*K*ceil(N/L)
//               B: each of the ceil(M/L) block rows reads all of B      = N*K*ceil(M/L)
//               total                                   (lecture: 2N^3/L)
//             shared loads: every thread reads V of sA and V of sB per k, over the
//             k range padded to a multiple of S (the tail tile is zero-filled):
//               ceil(M/L)*ceil(N/L) * (L/V)^2 * 2V * S*ceil(K/S)  (lecture: 2N^3/V)
//             global stores = M * N
//             FFMAs = ceil(M/L)*ceil(N/L) * L*L * S*ceil(K/S)
//   precond.  float32, row-major contiguous; any M, N, K >= 0;
//             the row blocks go on grid y, folded into (y, z) past 65535 blocks
//             (fold_grid, block_y in common.cuh; a block past the last row returns).
//   params    L = CVT_V3_L, S = CVT_V3_S, V = CVT_V3_V (matmul_config.h); (L/V)^2
//             threads per block; shared memory S*(L+4)*4 + S*L*4 bytes.
//   run       python -m bench check --kernels cuda_v3* --shapes 1000x999x37
#include "common.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

// Asking for 512 resident threads per SM caps registers at 65536 / 512 = 128 per thread:
// the 64 accumulators + 16 operands of V = 8 fit, and two 256-thread blocks share an SM.
template <int L, int S, int V>
__global__ void __launch_bounds__((L / V) * (L / V), ((L / V) * (L / V) < 512 ? 512 / ((L / V) * (L / V)) : 1))
matmul_v3_smem_tiling_kernel(const float* __restrict__ A, const float* __restrict__ B,
                             float* __restrict__ C, int M, int N, int K) {
  constexpr int T = L / V;          // threads along each side of the block
  constexpr int THREADS = T * T;
  constexpr int PAD = 4;            // keeps rows 16-byte aligned and stores conflict-free
  static_assert(L % V == 0, "L must be a multiple of V");
  static_assert((L * S) % THREADS == 0, "each thread must copy the same number of elements");
  static_assert(THREADS <= 1024, "a block holds at most 1024 threads");

  __shared__ __align__(16) float sA[S][L + PAD];  // A tile, transposed: sA[k][m]
  __shared__ __align__(16) float sB[S][L];        // B tile as it is:     sB[k][n]

  const int tx = threadIdx.x % T;   // column block of this thread inside the tile
  const int ty = threadIdx.x / T;   // row block
  const int64_t m0 = block_y() * L;  // the block's tile of C
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * L;
  if (m0 >= M) return;  // past the last row of a folded grid (see precond.)

  float c[V][V] = {};
  float a[V], b[V];
  for (int64_t k0 = 0; k0 < K; k0 += S) {
    __syncthreads();  // everyone is done reading the previous tiles
    // Cooperative fetch of A[m0 : m0+L, k0 : k0+S], zero outside the matrix.
#pragma unroll
    for (int p = 0; p < L * S / THREADS; ++p) {
      const int idx = threadIdx.x + p * THREADS;
      const int i = idx / S, kk = idx % S;
      const int64_t gm = m0 + i, gk = k0 + kk;
      sA[kk][i] = (gm < M && gk < K) ? A[gm * K + gk] : 0.0f;
    }
    // Cooperative fetch of B[k0 : k0+S, n0 : n0+L], zero outside the matrix.
#pragma unroll
    for (int p = 0; p < S * L / THREADS; ++p) {
      const int idx = threadIdx.x + p * THREADS;
      const int kk = idx / L, j = idx % L;
      const int64_t gk = k0 + kk, gn = n0 + j;
      sB[kk][j] = (gk < K && gn < N) ? B[gk * N + gn] : 0.0f;
    }
    __syncthreads();  // the tiles are complete

#pragma unroll
    for (int ki = 0; ki < S; ++ki) {
#pragma unroll
      for (int i = 0; i < V; ++i) a[i] = sA[ki][ty * V + i];
#pragma unroll
      for (int j = 0; j < V; ++j) b[j] = sB[ki][tx * V + j];
#pragma unroll
      for (int i = 0; i < V; ++i) {
#pragma unroll
        for (int j = 0; j < V; ++j) c[i][j] += a[i] * b[j];
      }
    }
  }

  const int64_t r0 = m0 + ty * V, c0 = n0 + tx * V;
#pragma unroll
  for (int i = 0; i < V; ++i) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      if (r0 + i < M && c0 + j < N) C[(r0 + i) * N + c0 + j] = c[i][j];
    }
  }
}

cudaError_t launch_matmul_v3_smem_tiling(const float* A, const float* B, float* C,
                                         int64_t M, int64_t N, int64_t K, cudaStream_t stream) {
  constexpr int L = CVT_V3_L, S = CVT_V3_S, V = CVT_V3_V;
  if (M == 0 || N == 0) return cudaSuccess;
  const int64_t gx = ceil_div(N, L), gy = ceil_div(M, L);
  dim3 grid;
  if (!fold_grid(gx, gy, &grid)) return cudaErrorInvalidConfiguration;
  matmul_v3_smem_tiling_kernel<L, S, V>
      <<<grid, (L / V) * (L / V), 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError();
}

}  // namespace cvt
