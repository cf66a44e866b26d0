// GPU matmul v6, a multi-stage cp.async pipeline and an L2-friendly block order.
//
//   idea      overlap the fetch of the next tiles with the FFMAs of the current one.
//             Shared memory holds a ring of STAGES tile pairs; while the block computes
//             tile t, the copies of tiles t+1 .. t+STAGES-1 are in flight. The copies are
//             cp.async (sm_80+): global -> shared without a register on the way and
//             without the thread waiting for them. And launch blocks in an order in
//             which the blocks resident together share their rows of A and columns of B
//             in L2 (grouped order, as in Triton's matmul tutorial).
//   change    from v5: the same warp-tile and thread-tile structure and inner loop (the
//             default sizes differ, chosen by the tile sweep: 128 x 256 x 16 block tiles,
//             64 x 64 warp tiles, 8 x 16 per thread; cuda/driver/ffma_sweep.sh). (1) The fetch:
//             v5 loaded a tile into registers, stored it to shared memory and waited at a
//             barrier before computing, so each step paid the global-memory latency
//             (~1 us from DRAM) while its FFMAs waited, hidden only by other resident
//             blocks. v6 issues the copies of tile t+STAGES-1 right after the barrier of
//             step t and computes tile t meanwhile: ONE barrier per step, and a copy has
//             STAGES-1 steps of compute to arrive. cp.async cannot transpose (it copies 4,
//             8 or 16 contiguous bytes), so A's tile is copied one float at a time into
//             sA[k][m]; B's in pieces of W floats (16-byte copies on the 128-bit path).
//             (2) Block order: the block with launch index b = block_y()*gridDim.x +
//             blockIdx.x (block_y() is blockIdx.y unless the grid is folded: precond.)
//             computes tile (tm, tn) with GROUP block rows per group, walked column by
//             column: tm = first + (b % (GROUP*gx)) % rows, tn = (b % (GROUP*gx)) / rows.
//             The ~132 blocks resident at once (one per SM with the default tiles) then
//             cover a GROUP x ~132/GROUP patch of C: they read GROUP row panels of A and
//             ~132/GROUP column panels of B, where launch order would read 132/gx block
//             rows and all gx column panels.
//   pipeline  step t (tiles = ceil(K/BK); the prologue committed tiles 0..STAGES-2, one
//             group each, empty groups past the last tile):
//               cp_async_wait<STAGES-2>  this thread's copies of tile t have landed: of
//                                        the t+STAGES-1 groups committed so far, at most
//                                        the STAGES-2 newest (tiles t+1..) are in flight;
//               __syncthreads            ... and every thread's, and everyone has finished
//                                        computing tile t-1, whose stage is reused next;
//               issue tile t+STAGES-1    into stage (t+STAGES-1) % STAGES = (t-1) % STAGES,
//                                        commit (an empty group past the last tile);
//               compute tile t           from stage t % STAGES.
//             An element outside the matrix is not copied: the thread stores a zero in its
//             place (same stage, same step, so the same barriers order it).
//   banks     as in v5: sA rows padded by 4 floats. A's 4-byte copies of a warp (32/BK
//             rows m x BK k) land at banks (4*k + m) mod 32: 32 distinct with BK = 8; with
//             the default BK = 16 (2 rows x 16 k) k and k+8 share a bank, a 2-way conflict
//             on the copies' shared-memory side, 8 copies per thread per 16-k step against
//             its 2048 FFMAs (the tile sweep measured BK = 16 faster all the same).
//   traffic   global loads (thread-issued elements: cp.async copies, counted by the
//             profile as warp instructions x 32 x the mean elements per copy, the model's
//             copy_width; masked elements issue nothing):
//               A: M*K*ceil(N/BN)   B: N*K*ceil(M/BM)   (lecture, BM = BN = L: 2N^3/L)
//             as instructions: one 4-byte copy per element of A; one 16-byte copy per 4
//             elements of B on the 128-bit path, one per element otherwise.
//             shared loads (as v5): ceil(M/BM)*ceil(N/BN) * BM*BN/(TM*TN) * (TM+TN) * BK*ceil(K/BK)
//             global stores = M * N
//             FFMAs = ceil(M/BM)*ceil(N/BN) * BM*BN * BK*ceil(K/BK)
//             L2 and DRAM: the grouped order changes what L2 keeps, not what the threads
//             issue; ncu's L2 and DRAM bytes show it (bench profile).
//   precond.  float32, row-major contiguous; any M, N, K >= 0, any alignment (W = 4 when
//             vector_path_ok, else W = 1, chosen by the launcher); sm_80 or newer for
//             asynchronous copies (cp_async.cuh: older GPUs get synchronous ones, correct
//             but slow). The rows of blocks go on grid y, folded into (y, z) past 65535
//             (fold_grid, block_y in common.cuh: the same launch order b; a block past the
//             last row returns).
//   params    BM, BN, BK, WM, WN, TM, TN, STAGES, GROUP = CVT_V6_* (matmul_config.h);
//             (BM/WM)*(BN/WN) warps per block; dynamic shared memory
//             STAGES * (BK*(BM+4) + BK*BN) * 4 bytes (the launcher raises the 48 KB default
//             limit when a configuration needs more).
//   run       python -m bench check --kernels cuda_v6* --shapes 1000x999x37,1024x1024x1024
#include "common.cuh"
#include "cp_async.cuh"
#include "launchers.h"
#include "matmul_config.h"
#include "warptiling.cuh"

namespace cvt {

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int GROUP, int W>
__global__ void __launch_bounds__(WarpTiling<BM, BN, WM, WN, TM, TN>::THREADS,
                                  WarpTiling<BM, BN, WM, WN, TM, TN>::MIN_BLOCKS)
matmul_v6_pipelined_kernel(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, int M, int N, int K) {
  using Tiling = WarpTiling<BM, BN, WM, WN, TM, TN>;
  constexpr int THREADS = Tiling::THREADS, LANES_M = Tiling::LANES_M, LANES_N = Tiling::LANES_N;
  constexpr int PM = Tiling::PM, PN = Tiling::PN;
  constexpr int PAD = 4;                          // see "banks" above
  constexpr int LDA = BM + PAD;                   // floats per row of a stage of sA
  constexpr int A_STAGE = BK * LDA, B_STAGE = BK * BN;
  static_assert(STAGES >= 2, "a pipeline needs at least two stages");
  static_assert((BM * BK) % THREADS == 0 && (BK * BN) % (W * THREADS) == 0,
                "each thread must copy the same number of pieces");

  // The ring: STAGES tiles of A (transposed, sA[s][k][m]) then STAGES tiles of B (sB[s][k][n]).
  extern __shared__ __align__(16) float smem[];
  float* const sA = smem;
  float* const sB = smem + STAGES * A_STAGE;

  // Grouped block order (see "change (2)"), over gx x gy tiles: gy is not gridDim.y, which
  // holds only part of the rows when the launcher folds them into (y, z) (see precond.).
  const int64_t gx = gridDim.x, gy = ceil_div(M, BM), y = block_y();
  if (y >= gy) return;  // past the last row of a folded grid
  const int64_t b = y * gx + blockIdx.x;
  const int64_t first = b / (GROUP * gx) * GROUP;         // first block row of b's group
  const int64_t rows = gy - first < GROUP ? gy - first : GROUP;  // block rows in the group
  const int64_t m0 = (first + (b % (GROUP * gx)) % rows) * BM;
  const int64_t n0 = (b % (GROUP * gx)) / rows * BN;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / (BN / WN), wn = warp % (BN / WN);
  const int lm = lane / LANES_N, ln = lane % LANES_N;
  const int row0 = wm * WM + lm * 4;
  const int col0 = wn * WN + ln * 4;

  // What this thread copies, fixed for the whole k loop: element (a_i + p*A_STEP, a_k) of
  // every A tile and piece (b_k + p*B_STEP, b_j) of every B tile, p = 0, 1, ...
  constexpr int A_STEP = THREADS / BK, B_STEP = THREADS / (BN / W);  // rows per pass
  static_assert(THREADS % BK == 0 && THREADS % (BN / W) == 0, "a pass must cover whole rows");
  const int a_i = threadIdx.x / BK, a_k = threadIdx.x % BK;
  const int b_k = threadIdx.x / (BN / W), b_j = (threadIdx.x % (BN / W)) * W;
  const float* const a_src = A + (m0 + a_i) * K + a_k;  // tile 0's element of pass 0
  const float* const b_src = B + static_cast<int64_t>(b_k) * N + n0 + b_j;
  const int64_t a_pass = static_cast<int64_t>(A_STEP) * K;  // pointer steps of one pass
  const int64_t b_pass = static_cast<int64_t>(B_STEP) * N;

  // Issues the copies of tile `tile` (k from tile*BK) into stage s; an element outside the
  // matrix gets a zero instead of a copy.
  const auto fetch = [&](int tile, int s) {
    const int64_t k0 = static_cast<int64_t>(tile) * BK;
    float* const a = sA + s * A_STAGE;
    float* const bt = sB + s * B_STAGE;
#pragma unroll
    for (int p = 0; p < BM * BK / THREADS; ++p) {  // A: one float per copy, transposed
      const int i = a_i + p * A_STEP;
      if (m0 + i < M && k0 + a_k < K) cp_async<1>(&a[a_k * LDA + i], a_src + p * a_pass + k0);
      else a[a_k * LDA + i] = 0.0f;
    }
#pragma unroll
    for (int p = 0; p < BK * BN / (W * THREADS); ++p) {  // B: pieces of W columns
      const int kk = b_k + p * B_STEP;
      if (k0 + kk < K && n0 + b_j < N) cp_async<W>(&bt[kk * BN + b_j], b_src + p * b_pass + k0 * N);
      else *reinterpret_cast<Floats<W>*>(&bt[kk * BN + b_j]) = Floats<W>{};
    }
  };

  const int tiles = static_cast<int>(ceil_div(K, BK));
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {  // prologue: tiles 0 .. STAGES-2
    if (s < tiles) fetch(s, s);
    cp_async_commit();
  }

  float c[TM][TN] = {};
  Floats<4> a[PM], b4[PN];
  for (int t = 0; t < tiles; ++t) {
    cp_async_wait<STAGES - 2>();  // this thread's copies of tile t are in shared memory
    __syncthreads();              // everyone's are; and stage (t-1) % STAGES is read by no one
    const int next = t + STAGES - 1;
    if (next < tiles) fetch(next, next % STAGES);
    cp_async_commit();

    const float* const at = sA + (t % STAGES) * A_STAGE;
    const float* const bt = sB + (t % STAGES) * B_STAGE;
#pragma unroll
    for (int ki = 0; ki < BK; ++ki) {
#pragma unroll
      for (int p = 0; p < PM; ++p) a[p] = *reinterpret_cast<const Floats<4>*>(&at[ki * LDA + row0 + p * 4 * LANES_M]);
#pragma unroll
      for (int q = 0; q < PN; ++q) b4[q] = *reinterpret_cast<const Floats<4>*>(&bt[ki * BN + col0 + q * 4 * LANES_N]);
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) c[i][j] += a[i / 4].v[i % 4] * b4[j / 4].v[j % 4];
      }
    }
  }

  // As v5: c[i][j] is C[m0 + row0 + (i/4)*4*LANES_M + i%4][n0 + col0 + (j/4)*4*LANES_N + j%4].
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

template <int W>
static cudaError_t launch_v6(const float* A, const float* B, float* C, int64_t M, int64_t N,
                             int64_t K, dim3 grid, cudaStream_t stream) {
  constexpr int BM = CVT_V6_BM, BN = CVT_V6_BN, BK = CVT_V6_BK, STAGES = CVT_V6_STAGES;
  const auto kernel = matmul_v6_pipelined_kernel<BM, BN, BK, CVT_V6_WM, CVT_V6_WN, CVT_V6_TM,
                                                  CVT_V6_TN, STAGES, CVT_V6_GROUP, W>;
  constexpr int threads = WarpTiling<BM, BN, CVT_V6_WM, CVT_V6_WN, CVT_V6_TM, CVT_V6_TN>::THREADS;
  constexpr int smem = STAGES * (BK * (BM + 4) + BK * BN) * static_cast<int>(sizeof(float));
  if (smem > 48 * 1024) {  // past the default limit a kernel must ask for its shared memory
    const cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (err != cudaSuccess) return err;
  }
  kernel<<<grid, threads, smem, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError();
}

cudaError_t launch_matmul_v6_pipelined(const float* A, const float* B, float* C,
                                       int64_t M, int64_t N, int64_t K, cudaStream_t stream) {
  if (M == 0 || N == 0) return cudaSuccess;
  const int64_t gx = ceil_div(N, CVT_V6_BN), gy = ceil_div(M, CVT_V6_BM);
  dim3 grid;
  if (!fold_grid(gx, gy, &grid)) return cudaErrorInvalidConfiguration;
  return vector_path_ok(A, B, C, N, K) ? launch_v6<4>(A, B, C, M, N, K, grid, stream)
                                       : launch_v6<1>(A, B, C, M, N, K, grid, stream);
}

}  // namespace cvt
