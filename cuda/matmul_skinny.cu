// GPU matmul, skinny path: M <= 16 or N <= 16, bound by reading the big operand once.
//
//   idea      with one side of C at most R = 16 wide, the product does 2*R FLOPs per value of
//             the big operand it reads: 8 FLOPs/byte in fp32 at R = 16, below the H100's
//             FFMA ridge (~20 FLOPs/byte), so the time is the time to read that operand
//             once, and the ladder's tiles (128 rows of A per block, mostly padding here)
//             waste the SMs. Here every warp streams its share of the big operand straight
//             from global memory into registers, once, 512 contiguous bytes per load (16
//             bytes a lane); the small operand (at most 16 x K) is staged in shared memory as
//             float, a chunk of k at a time. (16-bit values at R = 16 make 16 FLOPs/byte,
//             near the FFMA ridge: there the FFMAs and the shared-memory reads may bound
//             instead; cuda_auto sends 9 to 16 rows in 16 bits to split_k's tensor cores.)
//   design    R, the small dimension padded to 1, 2, 4, 8 or 16 (the smallest at least the
//             real one), is a template parameter. One kernel per side, each reading the big
//             operand along its rows, where it is contiguous:
//               M small (M <= 16, N > 16), matmul_skinny_kernel_cols: C[r, c] = sum_k
//                 A[r, k] B[k, c]. A thread owns VC = 16 bytes of consecutive columns (4 in
//                 fp32, 8 in 16 bits) and reads that piece of one row of B per k. A's chunk
//                 of KC = 64 values of k is staged as sA[k][r]: each k's R values are a
//                 broadcast to the warp. float acc[R][VC] in registers.
//               N small (N <= 16, checked first), matmul_skinny_kernel_rows: C^T = B^T A^T,
//                 the big operand A read along k. A warp owns WR = 4 rows of A; its 32
//                 lanes take consecutive 16-byte pieces (VK = 4 or 8 values of k) of a row,
//                 U = 2 pieces per row per chunk, so a chunk is KC = 64*VK values of k. B's
//                 chunk (KC x N, contiguous in memory) is staged as float in the order the
//                 lanes read it: the I = min(R, 4) values of one k and r-group that a lane
//                 needs are one vector, and the 32 lanes' vectors are consecutive (no bank
//                 conflict). Each lane sums its share of k for WR x R outputs, float
//                 acc[WR][R]; after the last chunk a butterfly of warp shuffles adds the 32
//                 lanes' sums (every lane then holds the same bits), and lane r stores
//                 output r of each row.
//             Only a split's last chunk, the last columns and the last rows need masks.
//   in flight the bandwidth reached is the bytes in flight over the memory latency (Little's
//             law), so each thread issues its loads in batches before their first use: M
//             small, 8 pieces (128 bytes) of B; N small, a chunk's U*WR pieces of A, issued
//             before B's chunk is staged so that the two waits overlap. In fp32 B's chunk is
//             staged by cp.async copies (PTX .ca: through L1, where the SM's other blocks of
//             the same split read the same chunk), all of a thread's in flight at once: one
//             wait per chunk, not one per load and store (16 bits convert on the way, so
//             they load and store).
//   splits    K is split over grid y so that a narrow output still fills the GPU: about
//             BLOCKS_PER_SM blocks per SM (5 for M small in 16 bits with R <= 4, whose
//             batches need the registers), S = min(BLOCKS_PER_SM * SMs / gx, MAX_SPLITS,
//             chunks of K, K * sizeof(T) / (8 * PARTIAL_SHARE * R_real)), at least 1, gx the
//             blocks of one split. The last cap keeps the partials' round trip (8 bytes per
//             float, written and read once) within 1/PARTIAL_SHARE of the big operand's
//             bytes. Then each split takes per = ceil(chunks / S) chunks and S =
//             ceil(chunks / per) (no split is empty). One split stores C itself. More write
//             their float partial sums to the caller's workspace W[split][r][c] (rows <
//             the real R only, c along the big output dimension), and
//             matmul_skinny_reduce_kernel sums W over the splits in split order (the same
//             bits on every run) and stores C. K = 0: the reduction alone, over zero splits,
//             writes C = 0.
//   traffic   Cn the big output dimension (N or M), R_real the small one (M or N):
//               global loads  the big operand: K*Cn values, each once
//                             the small one: R_real*K per block of a split's range, gx*R_real*K
//                             in all (L2 hits after the first: at most 16*K values)
//               global stores C: R_real*Cn values; with S > 1 splits, W: S*R_real*Cn floats
//                             written and read once more by the reduction (at most 1/4 of
//                             the big operand's bytes, by the cap above)
//               FFMAs         R per value of the big operand: ~ R * Cn * K
//             so the bound is K*Cn*sizeof(T) bytes at memory bandwidth (H100, 3.35 TB/s:
//             a 1 x 4096 x 4096 fp16 product reads 32 MiB of B, ~10 us).
//   precond.  A, B, C of one type (float32, float16 or bfloat16), row-major contiguous;
//             M <= 16 or N <= 16 (else cudaErrorInvalidValue); any K >= 0; any alignment:
//             16-byte vector loads when the big operand's rows allow them (M small: B
//             16-byte aligned and N a multiple of VC; N small: A 16-byte aligned and K a
//             multiple of VK), else the same loops with scalar loads. 64-bit offsets.
//   params    THREADS, KC, MAX_R, ROWS_PER_WARP (WR), BLOCKS_PER_SM, PARTIAL_SHARE,
//             MAX_SPLITS = CVT_SKINNY_* (matmul_config.h); static shared memory: KC*R*4
//             bytes (M small, 4 KiB at R = 16), 64*VK*R*4 bytes (N small, 32 KiB at R = 16
//             in 16 bits).
//   run       python -c "import torch, bindings; a = torch.randn(8, 4096, device='cuda',
//             dtype=torch.half); b = torch.randn(4096, 4096, device='cuda', dtype=torch.half);
//             print((bindings.ops().matmul_skinny(a, b) - a.float() @ b.float()).abs().max())"
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "convert.cuh"
#include "cp_async.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

constexpr int kSkinnyThreads = CVT_SKINNY_THREADS;
constexpr int kSkinnyKC = CVT_SKINNY_KC;
constexpr int kSkinnyRowsPerWarp = CVT_SKINNY_ROWS_PER_WARP;
constexpr int kSkinnyPieces = 2;  // N small: 16-byte pieces per lane and row in a chunk (U)
constexpr int kSkinnyBatch = 8;   // M small: 16-byte pieces a thread loads before using them
// M small, R <= 4: the blocks per SM the kernel is compiled for, which bounds its registers.
// In 16 bits 5, room for a whole batch of pieces in flight (at 7 blocks ptxas kept two or
// three loads ahead of their use), and the split is planned for 5; in fp32 8, as planned
// (it read at ~80% of copy bandwidth so). R = 8, 16: no bound (their sums need the room).
constexpr int kSkinnyColsBlocks16 = 5;
constexpr bool skinny_cols_16(int elem_bytes, int rows) { return elem_bytes == 2 && rows <= 4; }
template <class T, int R>
constexpr int skinny_cols_min_blocks() {
  return R > 4 ? 1 : skinny_cols_16(sizeof(T), R) ? kSkinnyColsBlocks16 : CVT_SKINNY_BLOCKS_PER_SM;
}
constexpr int kSkinnyReduceThreads = 256;
static_assert(CVT_SKINNY_MAX_R == 16, "the launcher instantiates R = 1, 2, 4, 8, 16");
static_assert(kSkinnyThreads % 32 == 0, "whole warps");
static_assert(kSkinnyKC % kSkinnyBatch == 0, "whole batches in a chunk");

// N values of T moved by one load: aligned to its size, so 16 bytes compile to LDG.128.
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// Value v of a piece, as float, read where the piece is. A bfloat16 is the top half of a
// float: its 32-bit word masked (the high value) or shifted (the low one), one instruction on
// the register the load wrote, as half's HADD2.F32 reads its halves in place (a conversion of
// each value on its own first unpacked both halves into registers of their own).
template <class T, int V>
__device__ __forceinline__ float value_of(const Pack<T, V>& p, int v) {
  return to_float(p.v[v]);
}
template <int V>
__device__ __forceinline__ float value_of(const Pack<__nv_bfloat16, V>& p, int v) {
  const unsigned word = reinterpret_cast<const unsigned*>(p.v)[v / 2];
  return __uint_as_float(v % 2 ? word & 0xffff0000u : word << 16);
}

// V consecutive values of T from `at`, as they are in memory (converted to float where they
// are used, so a 16-bit piece holds 4 registers, not 8). VECTOR: one 16-byte load (the
// launcher checked the alignment). MASKED: only the first `valid` values are read (0 to V),
// the rest are 0; a vector piece is read whole or not at all (valid is 0 or V there).
template <class T, int V, bool VECTOR, bool MASKED>
__device__ __forceinline__ Pack<T, V> load_piece(const T* __restrict__ at, int valid) {
  Pack<T, V> p;
  if (VECTOR && !(MASKED && valid < V)) {
    p = *reinterpret_cast<const Pack<T, V>*>(at);
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j)
      p.v[j] = !VECTOR && (!MASKED || j < valid) ? at[j] : from_float<T>(0.0f);
  }
  return p;
}

// M small: C[r, c] = sum over split blockIdx.y's k range of A[r, k] B[k, c], r < rows (<= R),
// c < N. One split (gridDim.y == 1): the block stores C; more: W[split][r][c].
template <class T, int R, bool VECTOR>
__global__ void __launch_bounds__(kSkinnyThreads, (skinny_cols_min_blocks<T, R>()))
matmul_skinny_kernel_cols(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                          float* __restrict__ W, int rows, int64_t N, int64_t K,
                          int64_t split_k) {
  constexpr int VC = 16 / sizeof(T);
  constexpr int KC = kSkinnyKC;
  __shared__ __align__(16) float sA[KC * R];  // sA[k][r]: A's chunk, transposed, as float

  const int64_t c = (static_cast<int64_t>(blockIdx.x) * kSkinnyThreads + threadIdx.x) * VC;
  const int64_t k_lo = static_cast<int64_t>(blockIdx.y) * split_k;
  const int64_t k_hi = k_lo + split_k < K ? k_lo + split_k : K;
  const int cols = N - c < VC ? static_cast<int>(N - c) : VC;  // <= 0 past the last column

  float acc[R][VC] = {};
  for (int64_t kc = k_lo; kc < k_hi; kc += KC) {
    __syncthreads();  // the previous chunk is read by everyone before it is overwritten
    // consecutive threads take consecutive values of k of one row of A
    for (int e = threadIdx.x; e < KC * R; e += kSkinnyThreads) {
      const int kk = e % KC, r = e / KC;
      const int64_t k = kc + kk;
      sA[kk * R + r] = r < rows && k < k_hi ? to_float(A[r * K + k]) : 0.0f;
    }
    __syncthreads();
    if (cols <= 0) continue;  // past the last column: nothing to load, but the barriers above

    // per row of B's piece: R x VC FFMAs on broadcast values of sA
    const auto step = [&](int kk, const Pack<T, VC>& piece) {
      float g[VC];
#pragma unroll
      for (int j = 0; j < VC; ++j) g[j] = to_float(piece.v[j]);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float a = sA[kk * R + r];
#pragma unroll
        for (int j = 0; j < VC; ++j) acc[r][j] += a * g[j];
      }
    };
    if (kc + KC <= k_hi && cols == VC) {  // a whole chunk of whole pieces: no masks
      // BATCH pieces' loads first, then their FFMAs: BATCH * 16 bytes in flight per thread
      // (the compiler, left to unroll one loop, kept two or three loads ahead of their use)
#pragma unroll 1
      for (int k0 = 0; k0 < KC; k0 += kSkinnyBatch) {
        Pack<T, VC> g[kSkinnyBatch];
#pragma unroll
        for (int p = 0; p < kSkinnyBatch; ++p)
          g[p] = load_piece<T, VC, VECTOR, false>(&B[(kc + k0 + p) * N + c], VC);
#pragma unroll
        for (int p = 0; p < kSkinnyBatch; ++p) step(k0 + p, g[p]);
      }
    } else {  // the split's last, partial chunk, or the last columns
      for (int kk = 0; kk < KC && kc + kk < k_hi; ++kk) {
        step(kk, load_piece<T, VC, VECTOR, true>(&B[(kc + kk) * N + c], cols));
      }
    }
  }
  if (cols <= 0) return;

  // one split: this block's sums are C; more: a partial tile W[split][r][c], for the reduction
  T* const out = C + c;
  float* const w = W + (static_cast<int64_t>(blockIdx.y) * rows) * N + c;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r >= rows) break;
#pragma unroll
    for (int j = 0; j < VC; ++j) {
      if (j >= cols) break;
      if (gridDim.y == 1) out[r * N + j] = from_float<T>(acc[r][j]);
      else w[r * N + j] = acc[r][j];
    }
  }
}

// N small: C[c, r] = sum over split blockIdx.y's k range of A[c, k] B[k, r], r < rows (<= R),
// c < M: the rows of A are the big output dimension. One split: the warp stores C; more:
// W[split][r][c].
// fp32 at R = 16: compiled for 4 blocks per SM (128 registers, no spill now that B's copies
// hold no registers); at 3 blocks (149 registers) it was slower on the H200
// (docs/performance/shapes.md, "fp32 N small in CUDA: B's chunk copied, not loaded and
// stored (prediction, then outcome)").
template <class T, int R, bool VECTOR>
__global__ void __launch_bounds__(kSkinnyThreads, R == 16 && sizeof(T) == 4 ? 4 : 1)
matmul_skinny_kernel_rows(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                          float* __restrict__ W, int rows, int64_t M, int64_t K,
                          int64_t split_k) {
  constexpr int VK = 16 / sizeof(T), U = kSkinnyPieces, WR = kSkinnyRowsPerWarp;
  constexpr int KC = 32 * U * VK;
  constexpr int I = R < 4 ? R : 4, J = R / I;  // B's R values of one k: J vectors of I floats
  // B's chunk as float: k = kc + (u*32 + lane)*VK + v, r = j*I + i at
  // (((u*VK + v)*J + j)*32 + lane)*I + i, so lane l's I floats of (u, v, j) are one vector
  // and the 32 lanes' vectors are consecutive.
  __shared__ __align__(16) float sB[KC * R];

  const int lane = threadIdx.x % 32;
  const int64_t c0 =
      (static_cast<int64_t>(blockIdx.x) * (kSkinnyThreads / 32) + threadIdx.x / 32) * WR;
  const int64_t k_lo = static_cast<int64_t>(blockIdx.y) * split_k;
  const int64_t k_hi = k_lo + split_k < K ? k_lo + split_k : K;
  const int own = M - c0 < WR ? static_cast<int>(M - c0) : WR;  // this warp's rows; <= 0: none
  const bool b_vector =
      I > 1 && rows % I == 0 && reinterpret_cast<uintptr_t>(B) % (I * sizeof(T)) == 0;
  // fp32: B's values are staged as they are, by cp.async; 16 bits: converted to float on the
  // way, by loads and stores
  constexpr bool kCopyB = sizeof(T) == 4;

  float acc[WR][R] = {};
  for (int64_t kc = k_lo; kc < k_hi; kc += KC) {
    // every load of A's chunk first (U*WR 16-byte pieces in flight), in flight while B's
    // chunk is staged below; one branch around all of them, not one per piece (a choice per
    // piece made the compiler load each into one register and copy it out, a memory latency
    // each)
    const bool whole = kc + KC <= k_hi && own == WR;
    const T* const first = A + c0 * K + kc + lane * VK;  // this lane's first piece of row c0
    Pack<T, VK> g[U][WR];
    if (whole) {
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int w = 0; w < WR; ++w)
          g[u][w] = load_piece<T, VK, VECTOR, false>(first + w * K + u * 32 * VK, VK);
    } else if (own > 0) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t left = k_hi - (kc + (u * 32 + lane) * VK);  // values of k left in split
        const int valid = left <= 0 ? 0 : left < VK ? static_cast<int>(left) : VK;
#pragma unroll
        for (int w = 0; w < WR; ++w)
          g[u][w] = load_piece<T, VK, VECTOR, true>(first + w * K + u * 32 * VK,
                                                    w < own ? valid : 0);
      }
    }

    __syncthreads();  // the previous chunk is read by everyone before it is overwritten
    // consecutive threads fill consecutive floats of sB (no bank conflict), reading B's
    // values from the chunk's KC * rows contiguous ones (L2 hits after the first block).
    // Where rows is a multiple of I (and B aligned to I values), the I values of one k and
    // r-group are consecutive in B as in sB: one load and one store each (at R = 16 in fp32,
    // 8 loads of 16 bytes per thread and chunk instead of 32 of 4). fp32 (kCopyB): each is a
    // cp.async copy, so all of a thread's copies are in flight together (a load and its store
    // waited for one L2 round trip after another, about four per chunk as ptxas unrolled
    // the loop by two), through L1 (.ca), where the SM's other blocks of the split find it
    if (b_vector) {
      for (int e = threadIdx.x * I; e < KC * R; e += kSkinnyThreads * I) {
        const int l = e / I % 32, j = e / (32 * I) % J, uv = e / (32 * R);
        const int64_t k = kc + ((uv / VK) * 32 + l) * VK + uv % VK;
        const bool in = j * I < rows && k < k_hi;
        if constexpr (kCopyB) {
          if (in) {
            cp_async<I, true>(&sB[e], reinterpret_cast<const float*>(&B[k * rows + j * I]));
            continue;
          }
        }
        Pack<float, I> f;
        if (in) {
          const Pack<T, I> v = *reinterpret_cast<const Pack<T, I>*>(&B[k * rows + j * I]);
#pragma unroll
          for (int i = 0; i < I; ++i) f.v[i] = to_float(v.v[i]);
        } else {
#pragma unroll
          for (int i = 0; i < I; ++i) f.v[i] = 0.0f;
        }
        *reinterpret_cast<Pack<float, I>*>(&sB[e]) = f;
      }
    } else {
      for (int e = threadIdx.x; e < KC * R; e += kSkinnyThreads) {
        const int i = e % I, l = e / I % 32, j = e / (32 * I) % J, uv = e / (32 * R);
        const int r = j * I + i, kk = ((uv / VK) * 32 + l) * VK + uv % VK;
        const int64_t k = kc + kk;
        const bool in = r < rows && k < k_hi;
        if constexpr (kCopyB) {
          if (in) {
            cp_async<1, true>(&sB[e], reinterpret_cast<const float*>(&B[k * rows + r]));
            continue;
          }
        }
        sB[e] = in ? to_float(B[k * rows + r]) : 0.0f;
      }
    }
    if constexpr (kCopyB) {
      cp_async_commit();
      cp_async_wait<0>();  // this thread's copies have landed; the barrier below: everyone's
    }
    __syncthreads();
    if (own <= 0) continue;  // past the last row: nothing loaded, but the barriers above

#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int v = 0; v < VK; ++v) {
        float a[WR];
#pragma unroll
        for (int w = 0; w < WR; ++w) a[w] = value_of(g[u][w], v);
#pragma unroll
        for (int j = 0; j < J; ++j) {
          const Pack<float, I> b = *reinterpret_cast<const Pack<float, I>*>(
              &sB[(((u * VK + v) * J + j) * 32 + lane) * I]);
#pragma unroll
          for (int w = 0; w < WR; ++w)
#pragma unroll
            for (int i = 0; i < I; ++i) acc[w][j * I + i] += a[w] * b.v[i];
        }
      }
  }

  // the 32 lanes' sums: a butterfly, after which every lane holds each total
#pragma unroll
  for (int w = 0; w < WR; ++w)
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int mask = 16; mask > 0; mask /= 2)
        acc[w][r] += __shfl_xor_sync(0xffffffffu, acc[w][r], mask);

  // lane r stores output r of each of the warp's rows: C[c, r], or W[split][r][c]
  if (lane >= rows) return;
#pragma unroll
  for (int w = 0; w < WR; ++w) {
    if (w >= own) break;
    float sum = acc[w][0];
#pragma unroll
    for (int r = 1; r < R; ++r) sum = r == lane ? acc[w][r] : sum;
    const int64_t c = c0 + w;
    if (gridDim.y == 1) C[c * rows + lane] = from_float<T>(sum);
    else W[(static_cast<int64_t>(blockIdx.y) * rows + lane) * M + c] = sum;
  }
}

// out[r, c] = sum over the splits s, in order, of W[s][r][c]: one thread per output,
// consecutive threads along c (W's reads coalesced). The loads go out 16 at a time, then
// are added in order: a thread's chain of up to 256 dependent loads would cost a memory
// latency each (~20 us at 64 splits), more than the product itself at 1 x 4096 x 4096.
// splits = 0 (K = 0) stores zeros.
template <class T>
__global__ void __launch_bounds__(kSkinnyReduceThreads)
matmul_skinny_reduce_kernel(const float* __restrict__ W, T* __restrict__ out, int64_t o_r,
                            int64_t o_c, int splits, int rows, int64_t Cn) {
  constexpr int kBatch = 16;
  const int64_t e = static_cast<int64_t>(blockIdx.x) * kSkinnyReduceThreads + threadIdx.x;
  const int64_t n = rows * Cn;
  if (e >= n) return;
  const int64_t r = e / Cn, c = e % Cn;
  float sum = 0.0f;
  for (int s0 = 0; s0 < splits; s0 += kBatch) {
    float w[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) w[i] = s0 + i < splits ? W[(s0 + i) * n + e] : 0.0f;
#pragma unroll
    for (int i = 0; i < kBatch; ++i)
      if (s0 + i < splits) sum += w[i];
  }
  out[r * o_r + c * o_c] = from_float<T>(sum);
}

// The product in the kernels' terms: which side is small, its real size, the big output
// dimension, and the split of K.
struct SkinnyPlan {
  bool n_small;      // N <= MAX_R (checked first): C^T = B^T A^T; else M small
  int rows;          // the small dimension (N or M)
  int64_t cn;        // the big output dimension (M or N)
  int64_t gx;        // blocks of one split
  int splits;        // of K over grid y; 0 when K = 0 (the reduction alone writes zeros)
  int64_t split_k;   // values of k per split, a multiple of the chunk
};

// See "splits" in the header. False when neither M nor N is small.
static bool plan_skinny(int64_t M, int64_t N, int64_t K, int elem_bytes, int sms,
                        SkinnyPlan* p) {
  int64_t per_block, chunk;  // big-dimension values per block, values of k per chunk
  if (N <= CVT_SKINNY_MAX_R) {
    *p = {true, static_cast<int>(N), M, 0, 1, 0};
    per_block = kSkinnyThreads / 32 * kSkinnyRowsPerWarp;
    chunk = 32 * kSkinnyPieces * (16 / elem_bytes);
  } else if (M <= CVT_SKINNY_MAX_R) {
    *p = {false, static_cast<int>(M), N, 0, 1, 0};
    per_block = static_cast<int64_t>(kSkinnyThreads) * (16 / elem_bytes);
    chunk = kSkinnyKC;
  } else {
    return false;
  }
  p->gx = ceil_div(p->cn, per_block);
  const int64_t chunks = ceil_div(K, chunk);
  if (chunks == 0) {
    p->splits = 0;
    return true;
  }
  const int per_sm = !p->n_small && skinny_cols_16(elem_bytes, p->rows) ? kSkinnyColsBlocks16
                                                                      : CVT_SKINNY_BLOCKS_PER_SM;
  int64_t s = p->gx > 0 ? static_cast<int64_t>(per_sm) * sms / p->gx : 1;
  if (s > CVT_SKINNY_MAX_SPLITS) s = CVT_SKINNY_MAX_SPLITS;
  if (s > chunks) s = chunks;
  const int64_t rows = p->rows > 0 ? p->rows : 1;  // 0 where M or N is 0 (nothing launched)
  const int64_t by_bytes = K * elem_bytes / (8 * CVT_SKINNY_PARTIAL_SHARE * rows);
  if (s > by_bytes) s = by_bytes;
  if (s < 1) s = 1;
  const int64_t per = ceil_div(chunks, s);
  p->splits = static_cast<int>(ceil_div(chunks, per));
  p->split_k = per * chunk;
  return true;
}

static int64_t skinny_workspace(const SkinnyPlan& p) {
  return p.splits > 1 ? static_cast<int64_t>(p.splits) * p.rows * p.cn : 0;
}

static int element_bytes(MatmulType type) { return type == MatmulType::kFloat32 ? 4 : 2; }

int64_t matmul_skinny_workspace_floats(int64_t M, int64_t N, int64_t K, MatmulType type,
                                       int device) {
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return -1;
  SkinnyPlan p;
  return plan_skinny(M, N, K, element_bytes(type), sms, &p) ? skinny_workspace(p) : -1;
}

// The kernel of the plan's side for R and VECTOR, then the reduction where K was split (or
// is 0).
template <class T, int R, bool VECTOR>
static cudaError_t launch_skinny(const T* A, const T* B, T* C, float* W, const SkinnyPlan& p,
                                 int64_t K, cudaStream_t stream) {
  if (p.splits > 0) {
    const dim3 grid(static_cast<unsigned>(p.gx), static_cast<unsigned>(p.splits));  // gx < 2^31
    if (p.n_small)
      matmul_skinny_kernel_rows<T, R, VECTOR><<<grid, kSkinnyThreads, 0, stream>>>(
          A, B, C, W, p.rows, p.cn, K, p.split_k);
    else
      matmul_skinny_kernel_cols<T, R, VECTOR><<<grid, kSkinnyThreads, 0, stream>>>(
          A, B, C, W, p.rows, p.cn, K, p.split_k);
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || p.splits == 1) return err;
  }
  // W[s][r][c] to C: C[c, r] (N small) or C[r, c] (M small)
  const int64_t o_r = p.n_small ? 1 : p.cn, o_c = p.n_small ? p.rows : 1;
  const unsigned blocks =
      static_cast<unsigned>(ceil_div(static_cast<int64_t>(p.rows) * p.cn, kSkinnyReduceThreads));
  matmul_skinny_reduce_kernel<T><<<blocks, kSkinnyReduceThreads, 0, stream>>>(
      W, C, o_r, o_c, p.splits, p.rows, p.cn);
  return cudaGetLastError();
}

// R: the smallest of 1, 2, 4, 8, 16 at least the real rows.
template <class T, bool VECTOR>
static cudaError_t launch_skinny_r(const T* A, const T* B, T* C, float* W, const SkinnyPlan& p,
                                   int64_t K, cudaStream_t stream) {
#define CVT_SKINNY_R(RR) \
  if (p.rows <= RR) return launch_skinny<T, RR, VECTOR>(A, B, C, W, p, K, stream);
  CVT_SKINNY_R(1) CVT_SKINNY_R(2) CVT_SKINNY_R(4) CVT_SKINNY_R(8) CVT_SKINNY_R(16)
#undef CVT_SKINNY_R
  return cudaErrorInvalidValue;
}

// Vector loads where the big operand's rows are whole 16-byte pieces from a 16-byte aligned
// start: A with K a multiple of VK (N small), B with N a multiple of VC (M small).
template <class T>
static cudaError_t launch_skinny_typed(const T* A, const T* B, T* C, float* W,
                                       const SkinnyPlan& p, int64_t N, int64_t K,
                                       cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  const bool vector = p.n_small ? reinterpret_cast<uintptr_t>(A) % 16 == 0 && K % V == 0
                                : reinterpret_cast<uintptr_t>(B) % 16 == 0 && N % V == 0;
  return vector ? launch_skinny_r<T, true>(A, B, C, W, p, K, stream)
                : launch_skinny_r<T, false>(A, B, C, W, p, K, stream);
}

cudaError_t launch_matmul_skinny(const void* A, const void* B, void* C, int64_t M, int64_t N,
                                 int64_t K, MatmulType type, float* workspace,
                                 int64_t workspace_floats, cudaStream_t stream) {
  int device = 0, sms = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) return err;
  SkinnyPlan p;
  if (!plan_skinny(M, N, K, element_bytes(type), sms, &p)) return cudaErrorInvalidValue;
  if (M == 0 || N == 0) return cudaSuccess;
  if (workspace_floats < skinny_workspace(p)) return cudaErrorInvalidValue;
  switch (type) {
    case MatmulType::kFloat32:
      return launch_skinny_typed(static_cast<const float*>(A), static_cast<const float*>(B),
                                 static_cast<float*>(C), workspace, p, N, K, stream);
    case MatmulType::kFloat16:
      return launch_skinny_typed(static_cast<const __half*>(A), static_cast<const __half*>(B),
                                 static_cast<__half*>(C), workspace, p, N, K, stream);
    case MatmulType::kBFloat16:
      return launch_skinny_typed(static_cast<const __nv_bfloat16*>(A),
                                 static_cast<const __nv_bfloat16*>(B),
                                 static_cast<__nv_bfloat16*>(C), workspace, p, N, K, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace cvt
