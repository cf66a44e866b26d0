// GPU matmul t1, the first tensor-core rung: warp-level mma.sync fed by ldmatrix from a
// swizzled shared-memory ring that cp.async fills (the Ampere way; runs on sm_80 and later).
//
//   idea      a tensor core multiplies a 16 x 16 tile of A by a 16 x 8 tile of B in ONE warp
//             instruction (mma.sync.m16n8k16: 4096 multiply-adds, against 32 for an FFMA),
//             so the FFMA ladder's bottleneck, issuing one instruction per multiply-add,
//             is gone; what is left is feeding it. The operands must sit in registers in
//             the fixed fragments of cuda/mma.cuh, and ldmatrix loads four 8 x 8 fragments
//             from shared memory in one instruction. A warp owns a WM x WN piece of the
//             block tile, as in v5's warptiling, but its unit of work is a 16 x 8 mma tile:
//             per 16 values of k it loads WM/16 A fragments and WN/16 pairs of B fragments
//             and issues (WM/16) * (WN/8) mma instructions (4 + 4 loads for 32 mma with the
//             defaults). The ring of cp.async stages is v6's.
//   change    from v7 (the last FFMA rung): fp16 or bf16 inputs and output, float32
//             accumulation; the inner loop is ldmatrix + mma.sync instead of shared loads +
//             FFMA; A stays row-major in shared memory (the A fragment wants rows of k) and
//             B row-major along n (ldmatrix .trans turns its k-rows into the B fragment's
//             columns); shared memory is swizzled instead of padded (see "banks"); one 1-D
//             grid in v6's grouped order. Kept from v7: the lean fetch of interior tiles. Not
//             yet: an epilogue through shared memory, Hopper's wgmma and TMA (later rungs).
//   banks     ldmatrix reads 8 rows of 16 bytes per matrix; 16-byte piece p of a row lies in
//             bank group p mod 8 (8 groups of 4 banks per 128 bytes). An A row of BK = 32
//             values is 64 bytes = 4 pieces, so rows r and r + 2 would collide; piece p of row
//             r is stored at p ^ ((r / 2) % 4): the 8 rows of a matrix land in 8 groups (BK =
//             64: 8 pieces a row, stored at p ^ (r % 8)). A
//             B row is BN values = BN/8 pieces, and a .trans matrix reads one piece from 8
//             consecutive k-rows, all in the same group; piece p of k-row r is stored at
//             p ^ (r % 8). The cp.async writes (8 consecutive pieces per quarter warp) stay
//             conflict-free under both maps.
//   pipeline  v6's: tiles STAGES-1 ahead, one barrier per BK-deep tile.
//   traffic   M, N, K any; BM x BN block tile, k padded to a multiple of BK (zeros).
//               global loads  A: M*K*ceil(N/BN)   B: N*K*ceil(M/BM)   (cp.async copies of 8
//                             values on the 16-byte path; 2-byte loads on the scalar path;
//                             pieces outside the matrices are zero stores, not loads)
//               shared loads  (ldmatrix) ceil(M/BM)*ceil(N/BN) * (BM/WM)*(BN/WN)
//                             * (WM + WN) * BK*ceil(K/BK)      ~ N^3/WN + N^3/WM
//               global stores M*N
//               multiply-adds ceil(M/BM)*ceil(N/BN) * BM*BN * BK*ceil(K/BK)
//   precond.  A, B, C fp16 or bf16 (all the same), row-major contiguous, float32
//             accumulation, output rounded to nearest; any M, N, K >= 0, any alignment: the
//             16-byte path when vector_path_ok_16bit (pointers 16-byte aligned, K and N
//             multiples of 8), else the scalar path (2-byte loads, same tiles and
//             fragments); tiles of C <= 2^31 - 1 (one block each on grid x: the launcher
//             returns cudaErrorInvalidConfiguration past it); sm_80+ (the launcher returns
//             cudaErrorNotSupported below).
//   params    BM, BN, BK, WM, WN, STAGES, GROUP = CVT_T1_* (matmul_config.h); with the
//             defaults 4 warps, dynamic shared memory STAGES * (BM*BK + BK*BN) * 2 bytes =
//             65,536, about 230 registers per thread, 2 blocks per SM.
//   run       python -m bench check --kernels cuda_t1* --precision bf16,fp16 --shapes 1000x999x37,4096x4096x4096
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "cp_async.cuh"
#include "launchers.h"
#include "matmul_config.h"
#include "mma.cuh"

namespace cvt {

template <class T, int BM, int BN, int BK, int WM, int WN, int STAGES, int GROUP, bool VEC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, 1)
matmul_t1_mma_sync_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                          int M, int N, int K) {
  constexpr int WARPS_N = BN / WN, THREADS = (BM / WM) * WARPS_N * 32;
  constexpr int MT = WM / 16, NT = WN / 8;       // mma tiles of a warp along m and n
  constexpr int A_STAGE = BM * BK, B_STAGE = BK * BN;  // values per stage
  constexpr int A_PIECES = BK / 8, B_PIECES = BN / 8;  // 16-byte pieces per row
  static_assert(BK == 32 || BK == 64, "the A swizzle is written for rows of 4 or 8 pieces");
  static_assert(BN % 64 == 0 && WM % 16 == 0 && WN % 16 == 0 && STAGES >= 2, "tile shape");
  static_assert((BM * A_PIECES) % THREADS == 0 && (BK * B_PIECES) % THREADS == 0,
                "each thread copies the same number of pieces");
  using Bits = unsigned short;  // a 16-bit value as moved, not computed

  // The ring: STAGES tiles of A (sA[s][m][k]) then STAGES tiles of B (sB[s][k][n]), each
  // row's 16-byte pieces swizzled (see "banks"): the offset of value (row, 8 * piece + e).
  extern __shared__ __align__(128) unsigned char smem[];
  T* const sA = reinterpret_cast<T*>(smem);
  T* const sB = sA + STAGES * A_STAGE;
  constexpr int A_ROWS_PER_LINE = 8 / A_PIECES;  // A rows per 128 bytes: 2 (BK = 32) or 1
  const auto a_at = [](int row, int piece) {
    return row * BK + ((piece ^ (row / A_ROWS_PER_LINE % A_PIECES)) << 3);
  };
  const auto b_at = [](int k, int piece) { return k * BN + ((piece ^ (k & 7)) << 3); };

  // v6's grouped order on a 1-D grid: GROUP block rows walked column by column, so the
  // blocks running together share their B columns and a few A rows in L2.
  const int64_t tiles_n = ceil_div(N, BN), tiles_m = ceil_div(M, BM);
  const int64_t b = blockIdx.x;
  const int64_t first = b / (GROUP * tiles_n) * GROUP;
  const int64_t rows = tiles_m - first < GROUP ? tiles_m - first : GROUP;
  const int64_t m0 = (first + (b % (GROUP * tiles_n)) % rows) * BM;
  const int64_t n0 = (b % (GROUP * tiles_n)) / rows * BN;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm0 = warp / WARPS_N * WM, wn0 = warp % WARPS_N * WN;  // the warp's piece of C

  // What this thread copies on the 16-byte path, fixed for the whole k loop: A pieces
  // p = 0, 1, ... of one column piece, A_APART rows apart; B pieces of one column piece,
  // B_APART k-rows apart. Their sources advance by a tile per step (BK columns of A, BK
  // rows of B). Their places in a stage never change, and A_APART and B_APART are multiples
  // of 8, so every piece of a thread has the swizzle of its first: p rows further is
  // p * A_APART * BK (B: p * B_APART * BN) values further.
  constexpr int A_COPIES = BM * A_PIECES / THREADS, A_APART = THREADS / A_PIECES;
  constexpr int B_COPIES = BK * B_PIECES / THREADS, B_APART = THREADS / B_PIECES;
  static_assert(A_APART % 8 == 0 && B_APART % 8 == 0, "one swizzle for all of a thread's pieces");
  const int a_row = tid / A_PIECES, a_piece = tid % A_PIECES;
  const int b_row = tid / B_PIECES, b_piece = tid % B_PIECES;
  const int a_dst = a_at(a_row, a_piece), b_dst = b_at(b_row, b_piece);
  const T* a_src = A + (m0 + a_row) * K + a_piece * 8;                      // advanced by BK
  const T* b_src = B + static_cast<int64_t>(b_row) * N + n0 + b_piece * 8;  // by BK * N
  const int64_t a_apart = static_cast<int64_t>(A_APART) * K, b_apart = static_cast<int64_t>(B_APART) * N;

  // v7's lean fetch: a block whose tile lies inside C copies its first K / BK k-tiles, all
  // inside A and B, with no mask; the partial k-tile and edge blocks take the masked fetch.
  const bool interior = m0 + BM <= M && n0 + BN <= N;
  const int lean_tiles = VEC && interior ? K / BK : 0;
  const auto fetch_lean = [&](T* a, T* bt) {
#pragma unroll
    for (int p = 0; p < A_COPIES; ++p) cp_async_16(a + a_dst + p * A_APART * BK, a_src + p * a_apart);
#pragma unroll
    for (int p = 0; p < B_COPIES; ++p) cp_async_16(bt + b_dst + p * B_APART * BN, b_src + p * b_apart);
    a_src += BK;
    b_src += static_cast<int64_t>(BK) * N;
  };
  // Pieces (or values, on the scalar path) outside A or B are zeros written to shared
  // memory: they issue no global load.
  const auto fetch_masked = [&](int tile, T* a, T* bt) {
    const int64_t k0 = static_cast<int64_t>(tile) * BK;
    if constexpr (VEC) {  // K % 8 == 0 and N % 8 == 0: a piece is wholly inside or outside
      const bool a_k_in = k0 + a_piece * 8 < K, b_column_in = n0 + b_piece * 8 < N;
#pragma unroll
      for (int p = 0; p < A_COPIES; ++p) {
        T* const dst = a + a_dst + p * A_APART * BK;
        if (a_k_in && m0 + a_row + p * A_APART < M) cp_async_16(dst, a_src + p * a_apart);
        else *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int p = 0; p < B_COPIES; ++p) {
        T* const dst = bt + b_dst + p * B_APART * BN;
        if (b_column_in && k0 + b_row + p * B_APART < K) cp_async_16(dst, b_src + p * b_apart);
        else *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
      }
      a_src += BK;
      b_src += static_cast<int64_t>(BK) * N;
    } else {  // any alignment: one value per load, consecutive threads along the row
      const Bits* const A16 = reinterpret_cast<const Bits*>(A);
      const Bits* const B16 = reinterpret_cast<const Bits*>(B);
#pragma unroll 4
      for (int p = 0; p < BM * BK / THREADS; ++p) {
        const int e = tid + p * THREADS, row = e / BK, k = e % BK;
        const int64_t gm = m0 + row, gk = k0 + k;
        reinterpret_cast<Bits*>(a)[a_at(row, k / 8) + k % 8] = gm < M && gk < K ? A16[gm * K + gk] : Bits(0);
      }
#pragma unroll 4
      for (int p = 0; p < BK * BN / THREADS; ++p) {
        const int e = tid + p * THREADS, row = e / BN, n = e % BN;
        const int64_t gk = k0 + row, gn = n0 + n;
        reinterpret_cast<Bits*>(bt)[b_at(row, n / 8) + n % 8] = gk < K && gn < N ? B16[gk * N + gn] : Bits(0);
      }
    }
  };
  // Tiles are fetched in increasing order, each once, so the running sources are always at
  // the next tile.
  const auto fetch = [&](int tile, int s) {
    T* const a = sA + s * A_STAGE;
    T* const bt = sB + s * B_STAGE;
    if (tile < lean_tiles) fetch_lean(a, bt);
    else fetch_masked(tile, a, bt);
  };

  // Where this lane's ldmatrix rows lie in a stage, computed once. A: row wm0 + lane % 16
  // of the warp's first 16 x 16 tile, k piece kk / 8 + lane / 16; tile i is 16 rows further,
  // which leaves (row / 2) % 4, and so the swizzle, unchanged: 16 * BK values further. B:
  // k-row lane % 16 at n piece (wn0 + 16 j) / 8 + lane / 16; the k-rows kk.. are kk * BN
  // values further (kk is a multiple of 8, so k % 8 and the swizzle are unchanged).
  int a_frag[BK / 16], b_frag[NT / 2];
#pragma unroll
  for (int kk = 0; kk < BK; kk += 16) a_frag[kk / 16] = a_at(wm0 + lane % 16, kk / 8 + lane / 16);
#pragma unroll
  for (int j = 0; j < NT / 2; ++j) b_frag[j] = b_at(lane % 16, (wn0 + j * 16) / 8 + lane / 16);

  const int tiles = static_cast<int>(ceil_div(K, BK));
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {  // prologue: tiles 0 .. STAGES-2
    if (s < tiles) fetch(s, s);
    cp_async_commit();
  }

  float acc[MT][NT][4] = {};  // the warp's WM x WN piece of C, as MT x NT mma tiles
  int read = 0, write = STAGES - 1;
  for (int t = 0; t < tiles; ++t) {
    cp_async_wait<STAGES - 2>();  // this thread's copies of tile t are in shared memory
    __syncthreads();              // everyone's are; and stage (t-1) % STAGES is read by no one
    if (t + STAGES - 1 < tiles) fetch(t + STAGES - 1, write);
    cp_async_commit();
    write = write + 1 == STAGES ? 0 : write + 1;
    const unsigned a_stage = smem_address(sA + read * A_STAGE);
    const unsigned b_stage = smem_address(sB + read * B_STAGE);
    read = read + 1 == STAGES ? 0 : read + 1;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      // Lane l names row l % 16 of a 16 x 16 A tile at k piece l / 16: matrices 0-3 are
      // (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15),
      // exactly a[0..3] of the fragment.
      unsigned af[MT][4];
#pragma unroll
      for (int i = 0; i < MT; ++i) ldmatrix_x4(af[i], a_stage + 2 * (a_frag[kk / 16] + i * 16 * BK));
      // Lane l names k-row kk + l % 16 at n piece l / 16 of a 16 x 16 B tile; .trans gives
      // (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15): b[0], b[1] of
      // mma tile 2j, then of mma tile 2j + 1.
      unsigned bf[NT][2];
#pragma unroll
      for (int j = 0; j < NT / 2; ++j) {
        unsigned r[4];
        ldmatrix_x4_trans(r, b_stage + 2 * (b_frag[j] + kk * BN));
        bf[2 * j][0] = r[0];
        bf[2 * j][1] = r[1];
        bf[2 * j + 1][0] = r[2];
        bf[2 * j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) mma_m16n8k16<T>(acc[i][j], af[i], bf[j][0], bf[j][1]);
    }
  }

  // acc[i][j][0..1] is C[row][col, col + 1] and acc[i][j][2..3] is C[row + 8][col, col + 1],
  // row = m0 + wm0 + 16 i + lane / 4, col = n0 + wn0 + 8 j + 2 (lane % 4). On the 16-byte
  // path N is even, so a pair is one 4-byte store; else each value is stored alone.
  const int g = lane / 4, q = lane % 4;
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t row = m0 + wm0 + i * 16 + g + 8 * h, col = n0 + wn0 + j * 8 + 2 * q;
        if (row >= M || col >= N) continue;
        const float lo = acc[i][j][2 * h], hi = acc[i][j][2 * h + 1];
        if constexpr (VEC) {
          *reinterpret_cast<unsigned*>(&C[row * N + col]) = pack_pair<T>(lo, hi);
        } else {
          C[row * N + col] = round_to<T>(lo);
          if (col + 1 < N) C[row * N + col + 1] = round_to<T>(hi);
        }
      }
}

// The 16-byte path is legal when every row of A (K values), B and C (N values) starts on a
// 16-byte boundary: the pointers 16-byte aligned, K and N multiples of 8.
inline bool vector_path_ok_16bit(const void* A, const void* B, const void* C, int64_t N,
                                 int64_t K) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return aligned(A) && aligned(B) && aligned(C) && N % 8 == 0 && K % 8 == 0;
}

template <class T, bool VEC>
static cudaError_t launch_t1(const void* A, const void* B, void* C, int64_t M, int64_t N,
                             int64_t K, int64_t blocks, cudaStream_t stream) {
  constexpr int BM = CVT_T1_BM, BN = CVT_T1_BN, BK = CVT_T1_BK, STAGES = CVT_T1_STAGES;
  const auto kernel = matmul_t1_mma_sync_kernel<T, BM, BN, BK, CVT_T1_WM, CVT_T1_WN, STAGES,
                                                CVT_T1_GROUP, VEC>;
  constexpr int threads = (BM / CVT_T1_WM) * (BN / CVT_T1_WN) * 32;
  constexpr int smem = STAGES * (BM * BK + BK * BN) * static_cast<int>(sizeof(T));
  const cudaError_t err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  kernel<<<static_cast<unsigned>(blocks), threads, smem, stream>>>(
      static_cast<const T*>(A), static_cast<const T*>(B), static_cast<T*>(C), M, N, K);
  return cudaGetLastError();
}

template <class T>
static cudaError_t launch_t1_path(const void* A, const void* B, void* C, int64_t M, int64_t N,
                                  int64_t K, int64_t blocks, cudaStream_t stream) {
  return vector_path_ok_16bit(A, B, C, N, K) ? launch_t1<T, true>(A, B, C, M, N, K, blocks, stream)
                                              : launch_t1<T, false>(A, B, C, M, N, K, blocks, stream);
}

cudaError_t launch_matmul_t1_mma_sync(const void* A, const void* B, void* C, int64_t M,
                                      int64_t N, int64_t K, TensorCoreType type,
                                      cudaStream_t stream) {
  if (M == 0 || N == 0) return cudaSuccess;
  if (!device_has_sm80()) return cudaErrorNotSupported;
  const int64_t blocks = ceil_div(M, CVT_T1_BM) * ceil_div(N, CVT_T1_BN);
  if (blocks > kMaxGridX) return cudaErrorInvalidConfiguration;  // one block per tile, on x
  return type == TensorCoreType::kBFloat16
             ? launch_t1_path<__nv_bfloat16>(A, B, C, M, N, K, blocks, stream)
             : launch_t1_path<__half>(A, B, C, M, N, K, blocks, stream);
}

}  // namespace cvt
