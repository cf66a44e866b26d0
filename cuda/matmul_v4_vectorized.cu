// GPU matmul v4, 128-bit accesses and a bank-conflict-free thread layout.
//
//   idea      move data in 16-byte pieces: a global load brings a float4 (LDG.128), a
//             shared load of the inner loop brings a float4 (LDS.128), a store of C
//             writes a float4 (STG.128). Fewer, wider instructions leave more issue
//             slots to the FFMAs, and a warp's global loads are whole 32-byte sectors.
//             And place each thread's V x V outputs so that the float4 reads of a warp
//             fall on different shared-memory banks.
//   change    from v3: same tiles (L x L per block, S deep, V x V per thread), same two
//             barriers per step, A still stored transposed (sA[k][m]).
//             (1) fetch: a thread loads 4 consecutive k of one row of A as one float4 and
//             stores them down a column of sA (4 scalar stores: the transposition), and 4
//             consecutive columns of a row of B as one float4, stored as one float4.
//             (2) layout: v3 gave thread (ty, tx) the contiguous columns tx*V..tx*V+V-1,
//             so the 16 threads of a warp row read float4s 32 bytes apart, at banks
//             8*tx .. 8*tx+3 (mod 32): threads tx and tx+4 share banks, and each read
//             takes twice the wavefronts its 256 bytes need (ncu on the H100 at 4096^3:
//             40% of v3's shared-load wavefronts are bank conflicts). v4 cuts the block tile into
//             (V/4)^2 panels of 4T x 4T (T = L/V threads a side) and gives each thread the
//             same 4 x 4 piece of every panel: rows p*4T + ty*4 .. +3, columns
//             q*4T + tx*4 .. +3. Consecutive threads now read consecutive float4s: 16
//             threads x 16 bytes = 256 bytes = 2 wavefronts, every bank used once in each.
//             The A reads of a warp (2 rows of threads) are broadcasts: 2 distinct
//             addresses, 1 wavefront.
//   banks     sA rows are padded by 4 floats (L + 4 per row), for the transposing stores.
//             With S = 8 a warp's 32 threads hold float4s of 16 rows m (2 threads per
//             row: k 0-3 and k 4-7); the j-th store of thread (m, half) goes to word
//             (half*4 + j)*(L + 4) + m, whose bank is (16*half + 4*j + m) mod 32 since
//             L is a multiple of 32: 16 consecutive m times 2 halves = 32 distinct banks.
//             Without the pad the bank would be m alone: 2-way conflicts. The pad is 4
//             floats, not 1, so that every sA row still starts on a 16-byte boundary for
//             the float4 reads. sB needs no pad: its float4 stores and reads run along a
//             row.
//   traffic   global loads (thread-issued elements, masked pieces issue nothing):
//               A: each of the ceil(N/L) block columns reads all of A   = M*K*ceil(N/L)
//               B: each of the ceil(M/L) block rows reads all of B      = N*K*ceil(M/L)
//               total                                   (lecture: 2N^3/L, as v3)
//             on the 128-bit path these are a quarter as many load instructions (each
//             moves 4 elements); on the scalar path one per element, as in v3.
//             shared loads: every thread reads V of sA and V of sB per k, over the k
//             range padded to a multiple of S (the tail tile is zero-filled):
//               ceil(M/L)*ceil(N/L) * (L/V)^2 * 2V * S*ceil(K/S)  (lecture: 2N^3/V)
//             in float4s: V/4 + V/4 LDS.128 per thread per k (v3's compiler-made LDS.128
//             had the same count, with bank conflicts on B).
//             global stores = M * N (in float4s on the 128-bit path)
//             FFMAs = ceil(M/L)*ceil(N/L) * L*L * S*ceil(K/S)
//   precond.  float32, row-major contiguous; any M, N, K >= 0, any alignment;
//             the row blocks go on grid y, folded into (y, z) past 65535 blocks
//             (fold_grid, block_y in common.cuh; a block past the last row returns).
//             The 128-bit path (W = 4) needs A, B, C 16-byte aligned and K, N multiples
//             of 4 (vector_path_ok in common.cuh); otherwise the launcher instantiates the
//             same kernel with W = 1, one element per load and store. The choice is the
//             launcher's: the kernel has no alignment branch.
//   params    L = CVT_V4_L, S = CVT_V4_S, V = CVT_V4_V (matmul_config.h); (L/V)^2
//             threads per block; shared memory S*(L+4)*4 + S*L*4 bytes.
//   run       python -m bench check --kernels cuda_v4* --shapes 1000x999x37,1024x1024x1024
#include "common.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

// W: floats per global load and store (4 on the 128-bit path, 1 on the scalar path).
// 512 resident threads per SM cap registers at 128 per thread, as in v3.
template <int L, int S, int V, int W>
__global__ void __launch_bounds__((L / V) * (L / V), ((L / V) * (L / V) < 512 ? 512 / ((L / V) * (L / V)) : 1))
matmul_v4_vectorized_kernel(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, int M, int N, int K) {
  constexpr int T = L / V;          // threads along each side of the block
  constexpr int THREADS = T * T;
  constexpr int P = V / 4;          // panels along each side; a thread has 4 x 4 in each
  constexpr int PAD = 4;            // see "banks" above
  static_assert(V % 4 == 0 && S % 4 == 0, "V and S must be multiples of 4 (float4 pieces)");
  static_assert((L * S) % (W * THREADS) == 0, "each thread must copy the same number of pieces");
  static_assert(THREADS <= 1024, "a block holds at most 1024 threads");

  __shared__ __align__(16) float sA[S][L + PAD];  // A tile, transposed: sA[k][m]
  __shared__ __align__(16) float sB[S][L];        // B tile as it is:     sB[k][n]

  const int tx = threadIdx.x % T;   // this thread's column inside every panel
  const int ty = threadIdx.x / T;   // its row inside every panel
  const int64_t m0 = block_y() * L;  // the block's tile of C
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * L;
  if (m0 >= M) return;  // past the last row of a folded grid (see precond.)

  float c[V][V] = {};
  Floats<4> a[P], b[P];
  for (int64_t k0 = 0; k0 < K; k0 += S) {
    __syncthreads();  // everyone is done reading the previous tiles
    // A[m0 : m0+L, k0 : k0+S] in pieces of W consecutive k, zero outside the matrix;
    // each piece is stored down column i of sA (the transposition).
#pragma unroll
    for (int p = 0; p < L * S / (W * THREADS); ++p) {
      const int idx = threadIdx.x + p * THREADS;
      const int i = idx / (S / W), kk = (idx % (S / W)) * W;
      const int64_t gm = m0 + i, gk = k0 + kk;
      Floats<W> piece = {};
      if (gm < M && gk < K) piece = *reinterpret_cast<const Floats<W>*>(&A[gm * K + gk]);
#pragma unroll
      for (int j = 0; j < W; ++j) sA[kk + j][i] = piece.v[j];
    }
    // B[k0 : k0+S, n0 : n0+L] in pieces of W consecutive columns, stored as they are.
#pragma unroll
    for (int p = 0; p < S * L / (W * THREADS); ++p) {
      const int idx = threadIdx.x + p * THREADS;
      const int kk = idx / (L / W), j = (idx % (L / W)) * W;
      const int64_t gk = k0 + kk, gn = n0 + j;
      Floats<W> piece = {};
      if (gk < K && gn < N) piece = *reinterpret_cast<const Floats<W>*>(&B[gk * N + gn]);
      *reinterpret_cast<Floats<W>*>(&sB[kk][j]) = piece;
    }
    __syncthreads();  // the tiles are complete

#pragma unroll
    for (int ki = 0; ki < S; ++ki) {
#pragma unroll
      for (int p = 0; p < P; ++p) a[p] = *reinterpret_cast<const Floats<4>*>(&sA[ki][p * 4 * T + ty * 4]);
#pragma unroll
      for (int q = 0; q < P; ++q) b[q] = *reinterpret_cast<const Floats<4>*>(&sB[ki][q * 4 * T + tx * 4]);
#pragma unroll
      for (int i = 0; i < V; ++i) {
#pragma unroll
        for (int j = 0; j < V; ++j) c[i][j] += a[i / 4].v[i % 4] * b[j / 4].v[j % 4];
      }
    }
  }

  // c[i][j] is C[m0 + (i/4)*4T + ty*4 + i%4][n0 + (j/4)*4T + tx*4 + j%4], stored in
  // pieces of W columns (a piece lies wholly inside or outside C: see precond.).
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const int64_t row = m0 + (i / 4) * 4 * T + ty * 4 + i % 4;
#pragma unroll
    for (int j = 0; j < V; j += W) {
      const int64_t col = n0 + (j / 4) * 4 * T + tx * 4 + j % 4;
      Floats<W> piece;
#pragma unroll
      for (int w = 0; w < W; ++w) piece.v[w] = c[i][j + w];
      if (row < M && col < N) *reinterpret_cast<Floats<W>*>(&C[row * N + col]) = piece;
    }
  }
}

cudaError_t launch_matmul_v4_vectorized(const float* A, const float* B, float* C,
                                        int64_t M, int64_t N, int64_t K, cudaStream_t stream) {
  constexpr int L = CVT_V4_L, S = CVT_V4_S, V = CVT_V4_V;
  if (M == 0 || N == 0) return cudaSuccess;
  const int64_t gx = ceil_div(N, L), gy = ceil_div(M, L);
  dim3 grid;
  if (!fold_grid(gx, gy, &grid)) return cudaErrorInvalidConfiguration;
  const dim3 block((L / V) * (L / V));
  if (vector_path_ok(A, B, C, N, K)) {
    matmul_v4_vectorized_kernel<L, S, V, 4><<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  } else {
    matmul_v4_vectorized_kernel<L, S, V, 1><<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  }
  return cudaGetLastError();
}

}  // namespace cvt
