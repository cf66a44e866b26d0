// GPU matmul, skinny path: M <= 16 or N <= 16, bound by reading the big operand once.
//
//   idea      with one side of C at most R = 16 wide, the product does 2*R FLOPs per value of
//             the big operand it reads: 8 FLOPs/byte in fp32 at R = 16, below the H100's
//             FFMA ridge (~20 FLOPs/byte), so the time is the time to read that operand
//             once, and the ladder's tiles (128 rows of A per block, mostly padding here)
//             waste the SMs. Here each thread owns a few columns of the big output dimension
//             and streams its share of the big operand straight from global memory into
//             registers, once; the small operand (at most 16 x K) is staged in shared
//             memory, KC values of k at a time, and read by every thread as a broadcast.
//             (16-bit values at R = 16 make 16 FLOPs/byte, near the FFMA ridge: there the
//             FFMAs, the conversions and the broadcast loads may bound instead, on a GPU
//             with more bandwidth per FLOP, an H200 more than an H100; unmeasured.)
//   design    both cases are one product out[r, c] = sum_k S[r, k] * G[k, c], r < R <= 16
//             the small dimension, c < Cn the big output dimension:
//               M small (M <= 16): S = A, G = B (contiguous along c), out[r, c] = C[r*N + c],
//                 Cn = N. A thread owns VC = 4 consecutive columns and reads one 4-wide
//                 piece of a row of B per k (16 bytes fp32, 8 bytes 16-bit): a warp reads
//                 whole 128-element rows of B, coalesced.
//               N small (N <= 16, checked first): C^T = B^T A^T, S[r, k] = B[k*N + r],
//                 G[k, c] = A[c*K + k] (contiguous along k), out[r, c] = C[c*N + r], Cn = M.
//                 A thread owns one row c of A and reads VK = 16 bytes of it along k per
//                 step: a warp touches 32 rows, and its next steps use the rest of each
//                 128-byte line, which L1 keeps.
//             R, the padded small dimension, is a template parameter (1, 2, 4, 8 or 16, the
//             smallest at least the real one): float acc[R][VC] live in registers. A block
//             of THREADS threads covers THREADS*VC columns and one split's k range; per
//             chunk of KC values of k it stages S (as float, zero past the split's end and
//             past the real rows) in shared memory sS[k][r], then every thread runs the
//             chunk: the threads of a warp read the same sS[k][r] (a broadcast). Only a
//             split's last chunk needs k masks; columns c >= Cn are masked.
//   splits    K is split over grid y so that a narrow output still fills the GPU: S = the
//             launcher's choice of about BLOCKS_PER_SM blocks per SM, S = min(BLOCKS_PER_SM
//             * SMs / ceil(Cn / (THREADS*VC)), MAX_SPLITS, ceil(K/KC) / MIN_SPLIT_CHUNKS), at
//             least 1; then each split takes per = ceil(chunks / S) chunks and S =
//             ceil(chunks / per) (no split is empty). One split stores C itself. More write
//             their float partial tiles to the caller's workspace W[split][r][c] (rows <
//             the real R only), and matmul_skinny_reduce_kernel sums W over the splits in
//             split order (the same bits on every run) and stores C. K = 0: the reduction
//             alone, over zero splits, writes C = 0.
//   traffic   Cn the big output dimension, R_real the small one, gx = ceil(Cn / (THREADS*VC)):
//               global loads  G (the big operand): K*Cn values, each once
//                             S (the small one):   R_real*K per block row of splits, gx*R_real*K
//                             in all (L2 hits after the first: S is at most 16*K values)
//               global stores C: R_real*Cn values; with S > 1 splits, W: S*R_real*Cn floats
//                             written and read once more by the reduction
//               FFMAs         R*VC per G piece: ~ R * Cn * K (R the padded small dimension)
//             so the bound is K*Cn*sizeof(T) bytes at memory bandwidth (H100, 3.35 TB/s:
//             a 16 x 4096 x 4096 fp16 product reads 32 MiB of B, ~10 us), plus, with S > 1
//             splits, W's round trip: 8*S*R_real*Cn bytes. Each split is at least
//             MIN_SPLIT_CHUNKS*KC = 256 deep, so S <= K/256 and W adds at most 8*16/256 =
//             0.5 bytes per column per k: 25% beside 16-bit values at R = 16, less elsewhere.
//   precond.  A, B, C of one type (float32, float16 or bfloat16), row-major contiguous;
//             M <= 16 or N <= 16 (else cudaErrorInvalidValue); any K >= 0; any alignment:
//             the vector loads when the big operand's rows allow them (M small: B 4*sizeof(T)
//             aligned and N % 4 == 0; N small: A 16-byte aligned and K % VK == 0), else the
//             same loop with scalar loads. 64-bit offsets throughout.
//   params    THREADS, KC, MAX_R, BLOCKS_PER_SM, MIN_SPLIT_CHUNKS, MAX_SPLITS = CVT_SKINNY_*
//             (matmul_config.h); static shared memory KC*R*4 bytes (4 KiB at R = 16).
//   run       python -c "import torch, bindings; a = torch.randn(8, 4096, device='cuda',
//             dtype=torch.half); b = torch.randn(4096, 4096, device='cuda', dtype=torch.half);
//             print((bindings.ops().matmul_skinny(a, b) - a.float() @ b.float()).abs().max())"
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common.cuh"
#include "convert.cuh"
#include "launchers.h"
#include "matmul_config.h"

namespace cvt {

constexpr int kSkinnyThreads = CVT_SKINNY_THREADS;
constexpr int kSkinnyKC = CVT_SKINNY_KC;
constexpr int kSkinnyReduceThreads = 256;
static_assert(CVT_SKINNY_MAX_R == 16, "the launcher instantiates R = 1, 2, 4, 8, 16");
static_assert(kSkinnyKC % 16 == 0, "a chunk holds whole 16-byte pieces of k of every type");

// N values of T moved by one load: aligned to its size, so 8 bytes compile to LDG.64 and
// 16 bytes to LDG.128.
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// g[v][j] = G[k + v, c + j] as float: a VK x VC piece of the big operand. ALONG_C (M small):
// G[k, c] = G[k*ld + c], the piece is one row of VC columns (VK = 1); else (N small) G[k, c] =
// G[c*ld + k], the piece is VK values of k of one row (VC = 1). VECTOR: one load of the
// whole piece. MASKED: zeros outside k < k_hi and c < Cn (in VECTOR mode a piece is all in or
// all out: see the launcher's alignment conditions; in scalar mode each value is checked).
template <class T, int VK, int VC, bool VECTOR, bool MASKED>
__device__ __forceinline__ void load_piece(const T* __restrict__ G, int64_t ld, int64_t k,
                                           int64_t c, int64_t k_hi, int64_t Cn,
                                           float (&g)[VK][VC]) {
  constexpr bool ALONG_C = VK == 1;
  if constexpr (VECTOR) {
    constexpr int V = ALONG_C ? VC : VK;
    if (MASKED && !(k < k_hi && c < Cn)) {
#pragma unroll
      for (int v = 0; v < VK; ++v)
#pragma unroll
        for (int j = 0; j < VC; ++j) g[v][j] = 0.0f;
      return;
    }
    const T* const at = ALONG_C ? &G[k * ld + c] : &G[c * ld + k];
    const Pack<T, V> p = *reinterpret_cast<const Pack<T, V>*>(at);
#pragma unroll
    for (int i = 0; i < V; ++i) {
      if constexpr (ALONG_C) g[0][i] = to_float(p.v[i]);
      else g[i][0] = to_float(p.v[i]);
    }
  } else {
#pragma unroll
    for (int v = 0; v < VK; ++v)
#pragma unroll
      for (int j = 0; j < VC; ++j) {
        const int64_t kk = k + v, cc = c + j;
        g[v][j] = !MASKED || (kk < k_hi && cc < Cn)
                      ? to_float(ALONG_C ? G[kk * ld + cc] : G[cc * ld + kk])
                      : 0.0f;
      }
  }
}

// out[r, c] = sum_k S[r, k] * G[k, c] over split blockIdx.y's k range [k_lo, k_hi), r < rows
// (<= R), c < Cn (see "design"). S[r, k] = S[r*s_r + k*s_k]; G as load_piece; out[r, c] =
// out[r*o_r + c*o_c]. One split (gridDim.y == 1): the block stores out; more: W[split][r][c].
template <class T, int R, int VK, int VC, bool VECTOR>
__global__ void __launch_bounds__(kSkinnyThreads)
matmul_skinny_kernel(const T* __restrict__ S, int64_t s_r, int64_t s_k,
                     const T* __restrict__ G, int64_t ld,
                     T* __restrict__ out, int64_t o_r, int64_t o_c, float* __restrict__ W,
                     int rows, int64_t Cn, int64_t K, int64_t split_k) {
  constexpr bool ALONG_C = VK == 1;  // M small; else N small
  static_assert((VK == 1) != (VC == 1), "a piece runs along c (M small) or along k (N small)");
  static_assert(kSkinnyKC % VK == 0, "a chunk holds whole pieces");
  constexpr int KC = kSkinnyKC;
  __shared__ __align__(16) float sS[KC * R];  // sS[k][r]: S's chunk, transposed, as float

  const int64_t c = (static_cast<int64_t>(blockIdx.x) * kSkinnyThreads + threadIdx.x) * VC;
  const int64_t k_lo = static_cast<int64_t>(blockIdx.y) * split_k;
  const int64_t k_hi = k_lo + split_k < K ? k_lo + split_k : K;

  float acc[R][VC] = {};
  for (int64_t kc = k_lo; kc < k_hi; kc += KC) {
    __syncthreads();  // the previous chunk is read by everyone before it is overwritten
    // Stage S's chunk: consecutive threads take consecutive elements of S in memory (along
    // k when M is small, where S = A; along r when N is small, where S = B^T).
    for (int e = threadIdx.x; e < KC * R; e += kSkinnyThreads) {
      const int kk = ALONG_C ? e % KC : e / R, r = ALONG_C ? e / KC : e % R;
      const int64_t k = kc + kk;
      sS[kk * R + r] = r < rows && k < k_hi ? to_float(S[r * s_r + k * s_k]) : 0.0f;
    }
    __syncthreads();
    if (c >= Cn) continue;  // past the last column: nothing to load, but the barriers above

    // The chunk: per piece of G, R x VC x VK FFMAs on broadcast values of sS.
    const auto step = [&](int kk, const float (&g)[VK][VC]) {
#pragma unroll
      for (int v = 0; v < VK; ++v) {
        const float* const s = &sS[(kk + v) * R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const float sv = s[r];
#pragma unroll
          for (int j = 0; j < VC; ++j) acc[r][j] += sv * g[v][j];
        }
      }
    };
    if (kc + KC <= k_hi && c + VC <= Cn) {  // a whole chunk of whole pieces: no masks
      // 16 pieces a step in flight per thread (unroll 8 made ptxas spill 8 bytes in the
      // bf16, R = 2 kernel; whole chunks at VK = 8 fp16/bf16)
#pragma unroll 16
      for (int kk = 0; kk < KC; kk += VK) {
        float g[VK][VC];
        load_piece<T, VK, VC, VECTOR, false>(G, ld, kc + kk, c, k_hi, Cn, g);
        step(kk, g);
      }
    } else {  // the split's last, partial chunk, or the last columns (scalar path)
      for (int kk = 0; kk < KC && kc + kk < k_hi; kk += VK) {
        float g[VK][VC];
        load_piece<T, VK, VC, VECTOR, true>(G, ld, kc + kk, c, k_hi, Cn, g);
        step(kk, g);
      }
    }
  }
  if (c >= Cn) return;

  if (gridDim.y == 1) {  // one split: this block's sums are C
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (r >= rows) break;
#pragma unroll
      for (int j = 0; j < VC; ++j)
        if (c + j < Cn) out[r * o_r + (c + j) * o_c] = from_float<T>(acc[r][j]);
    }
  } else {  // a partial tile: W[split][r][c], for the reduction
    float* const w = W + static_cast<int64_t>(blockIdx.y) * rows * Cn;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (r >= rows) break;
#pragma unroll
      for (int j = 0; j < VC; ++j)
        if (c + j < Cn) w[r * Cn + c + j] = acc[r][j];
    }
  }
}

// out[r, c] = sum over the splits s, in order, of W[s][r][c]: one thread per output,
// consecutive threads along c (W's reads coalesced). splits = 0 (K = 0) stores zeros.
template <class T>
__global__ void __launch_bounds__(kSkinnyReduceThreads)
matmul_skinny_reduce_kernel(const float* __restrict__ W, T* __restrict__ out, int64_t o_r,
                            int64_t o_c, int splits, int rows, int64_t Cn) {
  const int64_t e = static_cast<int64_t>(blockIdx.x) * kSkinnyReduceThreads + threadIdx.x;
  if (e >= rows * Cn) return;
  const int64_t r = e / Cn, c = e % Cn;
  float sum = 0.0f;
  for (int s = 0; s < splits; ++s) sum += W[s * rows * Cn + e];
  out[r * o_r + c * o_c] = from_float<T>(sum);
}

// The product in the kernel's terms: which case, R's real rows, the big output dimension.
struct SkinnyPlan {
  bool n_small;      // N <= MAX_R (checked first): C^T = B^T A^T; else M small
  int rows;          // the small dimension (N or M)
  int64_t cn;        // the big output dimension (M or N)
  int vc;            // columns per thread: 4 (M small) or 1 (N small)
  int splits;        // of K over grid y; 0 when K = 0 (the reduction alone writes zeros)
  int64_t split_k;   // values of k per split, a multiple of KC
};

// See "splits" in the header. False when neither M nor N is small.
static bool plan_skinny(int64_t M, int64_t N, int64_t K, int sms, SkinnyPlan* p) {
  if (N <= CVT_SKINNY_MAX_R) *p = {true, static_cast<int>(N), M, 1, 1, 0};
  else if (M <= CVT_SKINNY_MAX_R) *p = {false, static_cast<int>(M), N, 4, 1, 0};
  else return false;
  const int64_t chunks = ceil_div(K, kSkinnyKC);
  if (chunks == 0) {
    p->splits = 0;
    return true;
  }
  const int64_t gx = ceil_div(p->cn, static_cast<int64_t>(kSkinnyThreads) * p->vc);
  int64_t s = gx > 0 ? static_cast<int64_t>(CVT_SKINNY_BLOCKS_PER_SM) * sms / gx : 1;
  if (s > CVT_SKINNY_MAX_SPLITS) s = CVT_SKINNY_MAX_SPLITS;
  if (s > chunks / CVT_SKINNY_MIN_SPLIT_CHUNKS) s = chunks / CVT_SKINNY_MIN_SPLIT_CHUNKS;
  if (s < 1) s = 1;
  const int64_t per = ceil_div(chunks, s);
  p->splits = static_cast<int>(ceil_div(chunks, per));
  p->split_k = per * kSkinnyKC;
  return true;
}

static int64_t skinny_workspace(const SkinnyPlan& p) {
  return p.splits > 1 ? static_cast<int64_t>(p.splits) * p.rows * p.cn : 0;
}

int64_t matmul_skinny_workspace_floats(int64_t M, int64_t N, int64_t K, int device) {
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return -1;
  SkinnyPlan p;
  return plan_skinny(M, N, K, sms, &p) ? skinny_workspace(p) : -1;
}

// The kernel for R and VECTOR, then the reduction where K was split (or is 0).
template <class T, int R, int VK, int VC, bool VECTOR>
static cudaError_t launch_skinny(const T* S, int64_t s_r, int64_t s_k, const T* G, int64_t ld,
                                 T* out, int64_t o_r, int64_t o_c, float* W,
                                 const SkinnyPlan& p, int64_t K, cudaStream_t stream) {
  if (p.splits > 0) {
    const int64_t gx = ceil_div(p.cn, static_cast<int64_t>(kSkinnyThreads) * VC);  // < 2^31
    const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(p.splits));
    matmul_skinny_kernel<T, R, VK, VC, VECTOR><<<grid, kSkinnyThreads, 0, stream>>>(
        S, s_r, s_k, G, ld, out, o_r, o_c, W, p.rows, p.cn, K, p.split_k);
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || p.splits == 1) return err;
  }
  const unsigned blocks =
      static_cast<unsigned>(ceil_div(static_cast<int64_t>(p.rows) * p.cn, kSkinnyReduceThreads));
  matmul_skinny_reduce_kernel<T><<<blocks, kSkinnyReduceThreads, 0, stream>>>(
      W, out, o_r, o_c, p.splits, p.rows, p.cn);
  return cudaGetLastError();
}

// R: the smallest of 1, 2, 4, 8, 16 at least the real rows.
template <class T, int VK, int VC, bool VECTOR>
static cudaError_t launch_skinny_r(const T* S, int64_t s_r, int64_t s_k, const T* G, int64_t ld,
                                   T* out, int64_t o_r, int64_t o_c, float* W,
                                   const SkinnyPlan& p, int64_t K, cudaStream_t stream) {
#define CVT_SKINNY_R(RR)                                                                   \
  if (p.rows <= RR)                                                                        \
    return launch_skinny<T, RR, VK, VC, VECTOR>(S, s_r, s_k, G, ld, out, o_r, o_c, W, p, K, \
                                                stream);
  CVT_SKINNY_R(1) CVT_SKINNY_R(2) CVT_SKINNY_R(4) CVT_SKINNY_R(8) CVT_SKINNY_R(16)
#undef CVT_SKINNY_R
  return cudaErrorInvalidValue;
}

template <class T>
static cudaError_t launch_skinny_typed(const T* A, const T* B, T* C, int64_t M, int64_t N,
                                       int64_t K, float* W, const SkinnyPlan& p,
                                       cudaStream_t stream) {
  const auto aligned = [](const void* q, size_t bytes) {
    return reinterpret_cast<uintptr_t>(q) % bytes == 0;
  };
  if (p.n_small) {  // S[r, k] = B[k*N + r], G[k, c] = A[c*K + k], out[r, c] = C[c*N + r]
    constexpr int VK = 16 / sizeof(T);
    return aligned(A, 16) && K % VK == 0
               ? launch_skinny_r<T, VK, 1, true>(B, 1, N, A, K, C, 1, N, W, p, K, stream)
               : launch_skinny_r<T, VK, 1, false>(B, 1, N, A, K, C, 1, N, W, p, K, stream);
  }
  // M small: S[r, k] = A[r*K + k], G[k, c] = B[k*N + c], out[r, c] = C[r*N + c]
  return aligned(B, 4 * sizeof(T)) && N % 4 == 0
             ? launch_skinny_r<T, 1, 4, true>(A, K, 1, B, N, C, N, 1, W, p, K, stream)
             : launch_skinny_r<T, 1, 4, false>(A, K, 1, B, N, C, N, 1, W, p, K, stream);
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
  if (!plan_skinny(M, N, K, sms, &p)) return cudaErrorInvalidValue;
  if (M == 0 || N == 0) return cudaSuccess;
  if (workspace_floats < skinny_workspace(p)) return cudaErrorInvalidValue;
  switch (type) {
    case MatmulType::kFloat32:
      return launch_skinny_typed(static_cast<const float*>(A), static_cast<const float*>(B),
                                 static_cast<float*>(C), M, N, K, workspace, p, stream);
    case MatmulType::kFloat16:
      return launch_skinny_typed(static_cast<const __half*>(A), static_cast<const __half*>(B),
                                 static_cast<__half*>(C), M, N, K, workspace, p, stream);
    case MatmulType::kBFloat16:
      return launch_skinny_typed(static_cast<const __nv_bfloat16*>(A),
                                 static_cast<const __nv_bfloat16*>(B),
                                 static_cast<__nv_bfloat16*>(C), M, N, K, workspace, p, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace cvt
