// GPU matmul v5, warptiling: block tile -> warp tiles -> thread tiles.
//
//   idea      add the level of the hardware that v4 ignored, the warp: its 32 threads
//             execute each shared-memory load together, so what costs shared-memory
//             bandwidth is the set of distinct addresses a WARP reads. Give every warp a
//             compact WM x WN tile of the block tile and lay its 32 threads out as a
//             LANES_M x LANES_N grid inside it. Per k a warp then reads only WM values of
//             A and WN values of B, and each thread reuses its A fragment across all its
//             B sub-tiles (and the B fragment across its A sub-tiles) from registers.
//   change    from v4: the same fetch (float4 pieces, A transposed, W chosen by the
//             launcher), the same two barriers per step, the same 4 x 4 pieces per
//             thread; what changes is who owns which piece, and rectangular tiles:
//             BM x BN per block, BK deep. v4's warp was 2 rows of 16 threads spread over
//             a 16 x 128 strip of C: per k it read 16 + 128 = 144 floats for 2048 FMAs
//             (6 wavefronts: B's 16 distinct float4s need 2 per load). A v5 warp of
//             32 x 64 with 4 x 8 threads reads 32 + 64 = 96 floats for the same 2048 FMAs
//             (4 wavefronts: 4 distinct float4s of A, 8 of B, 1 wavefront each).
//   layout    warp w of the block takes rows wm*WM.. and columns wn*WN.. of the block
//             tile (wm = w / (BN/WN), wn = w % (BN/WN)). Lane l sits at (lm, ln) =
//             (l / LANES_N, l % LANES_N), LANES_M = WM/TM, LANES_N = WN/TN. Its thread
//             tile TM x TN is (TM/4) x (TN/4) pieces of 4 x 4: piece (p, q) at warp rows
//             p*4*LANES_M + lm*4 .. +3 and warp columns q*4*LANES_N + ln*4 .. +3. For one
//             (p, q) the 32 lanes cover a (4*LANES_M) x (4*LANES_N) sub-tile of the warp
//             tile, and consecutive lanes read consecutive float4s: no bank conflicts.
//   banks     sA rows padded by 4 floats, as in v4 (the transposing stores of a warp hit
//             32 distinct banks with BK = 8; with BK = 16 the same arithmetic gives 2-way
//             conflicts on those stores, 4 per thread per tile, off the inner loop).
//   traffic   global loads (thread-issued elements, masked pieces issue nothing):
//               A: M*K*ceil(N/BN)   B: N*K*ceil(M/BM)   (lecture, BM = BN = L: 2N^3/L)
//             a quarter as many instructions on the 128-bit path.
//             shared loads: each of the BM*BN/(TM*TN) threads of a block reads TM of sA
//             and TN of sB per k, over the k range padded to a multiple of BK:
//               ceil(M/BM)*ceil(N/BN) * BM*BN/(TM*TN) * (TM+TN) * BK*ceil(K/BK)
//               (lecture, TM = TN = V: 2N^3/V)
//             global stores = M * N
//             FFMAs = ceil(M/BM)*ceil(N/BN) * BM*BN * BK*ceil(K/BK)
//   precond.  float32, row-major contiguous; any M, N, K >= 0, any alignment (the
//             launcher picks W = 4 when vector_path_ok, else W = 1, as in v4);
//             the row blocks go on grid y, folded into (y, z) past 65535 blocks
//             (fold_grid, block_y in common.cuh; a block past the last row returns).
//   params    BM, BN, BK, WM, WN, TM, TN = CVT_V5_* (matmul_config.h);
//             (BM/WM)*(BN/WN) warps per block; shared memory BK*(BM+4)*4 + BK*BN*4 bytes.
//   run       python -m bench check --kernels cuda_v5* --shapes 1000x999x37,1024x1024x1024
#include "common.cuh"
#include "launchers.h"
#include "matmul_config.h"
#include "warptiling.cuh"

namespace cvt {

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int W>
__global__ void __launch_bounds__(WarpTiling<BM, BN, WM, WN, TM, TN>::THREADS,
                                  WarpTiling<BM, BN, WM, WN, TM, TN>::MIN_BLOCKS)
matmul_v5_warptiling_kernel(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, int M, int N, int K) {
  using Tiling = WarpTiling<BM, BN, WM, WN, TM, TN>;
  constexpr int THREADS = Tiling::THREADS, LANES_M = Tiling::LANES_M, LANES_N = Tiling::LANES_N;
  constexpr int PM = Tiling::PM, PN = Tiling::PN;
  constexpr int PAD = 4;  // see "banks" above
  static_assert(BK % 4 == 0, "BK must be a multiple of 4 (float4 pieces of A)");
  static_assert((BM * BK) % (W * THREADS) == 0 && (BK * BN) % (W * THREADS) == 0,
                "each thread must copy the same number of pieces");

  __shared__ __align__(16) float sA[BK][BM + PAD];  // A tile, transposed: sA[k][m]
  __shared__ __align__(16) float sB[BK][BN];        // B tile as it is:     sB[k][n]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / (BN / WN), wn = warp % (BN / WN);  // the warp's tile in the block tile
  const int lm = lane / LANES_N, ln = lane % LANES_N;      // the lane's place in the warp tile
  const int row0 = wm * WM + lm * 4;  // first row of piece (0, q) inside the block tile
  const int col0 = wn * WN + ln * 4;  // first column of piece (p, 0)
  const int64_t m0 = block_y() * BM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * BN;
  if (m0 >= M) return;  // past the last row of a folded grid (see precond.)

  float c[TM][TN] = {};
  Floats<4> a[PM], b[PN];
  for (int64_t k0 = 0; k0 < K; k0 += BK) {
    __syncthreads();  // everyone is done reading the previous tiles
    // The fetch of v4: A in pieces of W consecutive k, stored transposed; B in pieces of
    // W consecutive columns. Zero outside the matrix.
#pragma unroll
    for (int p = 0; p < BM * BK / (W * THREADS); ++p) {
      const int idx = threadIdx.x + p * THREADS;
      const int i = idx / (BK / W), kk = (idx % (BK / W)) * W;
      const int64_t gm = m0 + i, gk = k0 + kk;
      Floats<W> piece = {};
      if (gm < M && gk < K) piece = *reinterpret_cast<const Floats<W>*>(&A[gm * K + gk]);
#pragma unroll
      for (int j = 0; j < W; ++j) sA[kk + j][i] = piece.v[j];
    }
#pragma unroll
    for (int p = 0; p < BK * BN / (W * THREADS); ++p) {
      const int idx = threadIdx.x + p * THREADS;
      const int kk = idx / (BN / W), j = (idx % (BN / W)) * W;
      const int64_t gk = k0 + kk, gn = n0 + j;
      Floats<W> piece = {};
      if (gk < K && gn < N) piece = *reinterpret_cast<const Floats<W>*>(&B[gk * N + gn]);
      *reinterpret_cast<Floats<W>*>(&sB[kk][j]) = piece;
    }
    __syncthreads();  // the tiles are complete

#pragma unroll
    for (int ki = 0; ki < BK; ++ki) {
      // The warp's fragments of this k: PM float4s of A, PN float4s of B per thread.
#pragma unroll
      for (int p = 0; p < PM; ++p) a[p] = *reinterpret_cast<const Floats<4>*>(&sA[ki][row0 + p * 4 * LANES_M]);
#pragma unroll
      for (int q = 0; q < PN; ++q) b[q] = *reinterpret_cast<const Floats<4>*>(&sB[ki][col0 + q * 4 * LANES_N]);
      // Each a[p] meets every b[q] from registers: the reuse across sub-tiles.
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) c[i][j] += a[i / 4].v[i % 4] * b[j / 4].v[j % 4];
      }
    }
  }

  // c[i][j] is C[m0 + row0 + (i/4)*4*LANES_M + i%4][n0 + col0 + (j/4)*4*LANES_N + j%4],
  // stored in pieces of W columns.
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t row = m0 + row0 + (i / 4) * 4 * LANES_M + i % 4;
#pragma unroll
    for (int j = 0; j < TN; j += W) {
      const int64_t col = n0 + col0 + (j / 4) * 4 * LANES_N + j % 4;
      Floats<W> piece;
#pragma unroll
      for (int w = 0; w < W; ++w) piece.v[w] = c[i][j + w];
      if (row < M && col < N) *reinterpret_cast<Floats<W>*>(&C[row * N + col]) = piece;
    }
  }
}

cudaError_t launch_matmul_v5_warptiling(const float* A, const float* B, float* C,
                                        int64_t M, int64_t N, int64_t K, cudaStream_t stream) {
  constexpr int BM = CVT_V5_BM, BN = CVT_V5_BN, BK = CVT_V5_BK;
  constexpr int WM = CVT_V5_WM, WN = CVT_V5_WN, TM = CVT_V5_TM, TN = CVT_V5_TN;
  if (M == 0 || N == 0) return cudaSuccess;
  const int64_t gx = ceil_div(N, BN), gy = ceil_div(M, BM);
  dim3 grid;
  if (!fold_grid(gx, gy, &grid)) return cudaErrorInvalidConfiguration;
  const dim3 block(WarpTiling<BM, BN, WM, WN, TM, TN>::THREADS);
  if (vector_path_ok(A, B, C, N, K)) {
    matmul_v5_warptiling_kernel<BM, BN, BK, WM, WN, TM, TN, 4><<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  } else {
    matmul_v5_warptiling_kernel<BM, BN, BK, WM, WN, TM, TN, 1><<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  }
  return cudaGetLastError();
}

}  // namespace cvt
