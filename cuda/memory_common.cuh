// Helpers shared by the memory-bound kernels (vector add, copy, ReLU + dropout, softmax,
// RGB -> grey). No torch here, like every file of cuda/.
//
// Three ideas live here, each used by several kernels:
//
//   1. Types. A kernel reads float32, float16 or bfloat16, computes in float32 and stores
//      in the tensor's own type (to_float / from_float). The conversions are the explicit
//      intrinsics: the torch build compiles with __CUDA_NO_HALF_CONVERSIONS__ and friends,
//      which forbid the implicit ones.
//   2. Vectors. A memory-bound kernel is fastest when each thread moves 16 bytes per
//      instruction (LDG.128 / STG.128): Vec<T, VEC> is VEC elements, and load_vec /
//      store_vec move it as one access of its size. That is legal only when the address
//      is a multiple of that size; the launchers check it at run time (aligned16) and
//      instantiate the same kernel with VEC = 1 otherwise. Outputs are written "streaming"
//      (evict-first), see store_vec. vec_max, vec_sum_exp and vec_exp_scaled do a softmax's
//      float32 arithmetic on a whole vector, 16-bit elements a 32-bit pair at a time.
//   3. Reductions. warp_allreduce folds 32 values with shuffles (no shared memory);
//      block_allreduce folds a whole 1-D block: each warp folds its 32 values, warp
//      leaders write one value each to shared memory, warp 0 folds those;
//      column_allreduce folds the threads of each column of a 2-D block.
//   4. Column tiles (softmax over a dim other than the last): column_tile picks how many
//      neighbour columns a block reads together.
//
// The kernels' launch parameters (threads per block, vectors in flight) are the macros of
// memory_config.h, included here for every kernel file; each file names them once as its
// own constants (kAddThreads = CVT_ADD_THREADS, ...).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common.cuh"
#include "convert.cuh"
#include "memory_config.h"
#include "memory_launchers.h"

namespace cvt {

// ---------------------------------------------------------------------------------------
// 1. Types
// ---------------------------------------------------------------------------------------

// to_float and from_float<T>: convert.cuh.

// Elements of type T in one 16-byte access: 4 floats, 8 halves or 8 bfloat16s.
template <typename T> constexpr int kVec16 = static_cast<int>(16 / sizeof(T));

// ---------------------------------------------------------------------------------------
// 2. Vectors
// ---------------------------------------------------------------------------------------

template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Vec {
  T v[VEC];
};

// Global memory is accessed through a built-in vector type of the same size (uint4 for 16
// bytes). Outputs are written with __stcs, "st.global.cs": streaming, evict-first in L1
// and L2. Nothing here reads its output back, so keeping it out of the way leaves L2 to
// the inputs (the online softmax reads each row twice), and the Triton twins ask for the
// same with tl.store(..., cache_modifier=".cs"). It also always emits one vector
// instruction, where a plain struct store can be split into one store per element by the
// compiler (seen with nvcc 13 in the softmax kernels, whose row pointers it cannot prove
// aligned). The memcpy between Vec and the vector type only renames registers. Shared
// memory (softmax_row_sram.cu) uses plain struct accesses.
template <int BYTES> struct Word;
template <> struct Word<16> { using type = uint4; };
template <> struct Word<8> { using type = uint2; };
template <> struct Word<4> { using type = unsigned int; };
template <> struct Word<2> { using type = unsigned short; };
template <> struct Word<1> { using type = unsigned char; };

template <typename T, int VEC>
__device__ __forceinline__ Vec<T, VEC> load_vec(const T* p) {
  using W = typename Word<sizeof(T) * VEC>::type;
  const W w = *reinterpret_cast<const W*>(p);
  Vec<T, VEC> v;
  memcpy(&v, &w, sizeof(W));
  return v;
}

template <typename T, int VEC>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, VEC>& v) {
  using W = typename Word<sizeof(T) * VEC>::type;
  W w;
  memcpy(&w, &v, sizeof(W));
  __stcs(reinterpret_cast<W*>(p), w);
}

// One element, with the same streaming store (the scalar tails and the column kernels).
template <typename T>
__device__ __forceinline__ void store_one(T* p, T v) {
  Vec<T, 1> one;
  one.v[0] = v;
  store_vec<T, 1>(p, one);
}

// Whole-vector arithmetic in float32 for the softmax kernels: the largest element, the sum
// of exp(x - shift), and exp(x - shift) * scale in the vector's own type. 16-bit vectors
// are taken a 32-bit word (two elements) at a time: bfloat16 becomes float32 by moving the
// word's halves into place (no conversion instruction), float16 by one conversion of the
// pair. Element by element, the compiler kept 16-bit values in separate registers and an
// 8-vector step of bfloat16 spilled at 64 registers per thread (ptxas -v).
template <typename T, int VEC>
__device__ __forceinline__ float2 pair_to_float(const Vec<T, VEC>& a, int i) {
  static_assert(sizeof(T) == 2 && VEC % 2 == 0, "pairs of 16-bit elements");
  unsigned int w;
  memcpy(&w, &a.v[2 * i], 4);
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
  } else {
    __half2 h;
    memcpy(&h, &w, 4);
    return __half22float2(h);
  }
}

template <typename T, int VEC>
__device__ __forceinline__ float vec_max(const Vec<T, VEC>& a) {
  float r = -INFINITY;
  if constexpr (sizeof(T) == 2 && VEC % 2 == 0) {
#pragma unroll
    for (int i = 0; i < VEC / 2; ++i) {
      const float2 f = pair_to_float(a, i);
      r = fmaxf(r, fmaxf(f.x, f.y));
    }
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) r = fmaxf(r, to_float(a.v[j]));
  }
  return r;
}

template <typename T, int VEC>
__device__ __forceinline__ float vec_sum_exp(const Vec<T, VEC>& a, float shift) {
  float r = 0.0f;
  if constexpr (sizeof(T) == 2 && VEC % 2 == 0) {
#pragma unroll
    for (int i = 0; i < VEC / 2; ++i) {
      const float2 f = pair_to_float(a, i);
      r += __expf(f.x - shift) + __expf(f.y - shift);
    }
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) r += __expf(to_float(a.v[j]) - shift);
  }
  return r;
}

template <typename T, int VEC>
__device__ __forceinline__ Vec<T, VEC> vec_exp_scaled(const Vec<T, VEC>& a, float shift, float scale) {
  Vec<T, VEC> out;
  if constexpr (sizeof(T) == 2 && VEC % 2 == 0) {
#pragma unroll
    for (int i = 0; i < VEC / 2; ++i) {
      const float2 f = pair_to_float(a, i);
      out.v[2 * i] = from_float<T>(__expf(f.x - shift) * scale);
      out.v[2 * i + 1] = from_float<T>(__expf(f.y - shift) * scale);
    }
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) out.v[j] = from_float<T>(__expf(to_float(a.v[j]) - shift) * scale);
  }
  return out;
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Calls body(Type<T>{}) with T the C++ type of `dtype`: the one place where the
// launchers' runtime dtype becomes a template argument.
template <typename T> struct Type { using type = T; };

template <typename Body>
cudaError_t dispatch_dtype(DType dtype, Body&& body) {
  switch (dtype) {
    case DType::kFloat32: return body(Type<float>{});
    case DType::kFloat16: return body(Type<__half>{});
    case DType::kBFloat16: return body(Type<__nv_bfloat16>{});
  }
  return cudaErrorInvalidValue;
}

// ---------------------------------------------------------------------------------------
// 3. Reductions (float32)
// ---------------------------------------------------------------------------------------

struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

// The value of lane (this lane ^ mask) of the warp: a float, or a pair of floats (the split
// softmax folds (max, sum) pairs) moved as two shuffles.
__device__ __forceinline__ float shfl_xor(float v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}
__device__ __forceinline__ float2 shfl_xor(float2 v, int mask) {
  return make_float2(shfl_xor(v.x, mask), shfl_xor(v.y, mask));
}

template <typename T, typename Op>
__device__ __forceinline__ T warp_allreduce(T v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, shfl_xor(v, offset));
  return v;
}

// Every thread of a 1-D block (blockDim.x a multiple of 32) gets op folded over the block.
// `scratch` is 33 values of shared memory; the first __syncthreads makes a second call
// with the same scratch safe (nobody still reads scratch[32] of the previous one).
// A block of one warp (short rows) needs neither: the shuffles are the whole reduction.
template <typename T, typename Op>
__device__ __forceinline__ T block_allreduce(T v, Op op, T identity, T* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_allreduce(v, op);
  if (warps == 1) return v;  // uniform across the block: no thread skips a barrier alone
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    T w = lane < warps ? scratch[lane] : identity;
    w = warp_allreduce(w, op);
    if (lane == 0) scratch[32] = w;
  }
  __syncthreads();
  return scratch[32];
}

// Neighbour columns per block of the softmax column layouts (dim != -1): 8 to start with (one
// 32-byte sector of float32 per row of the tile), fewer when the tensor has fewer columns,
// more (up to max_tx) only while the grid keeps at least 4 blocks per SM of the device (the
// launcher is given its SM count, `sms`): on an H100 (132 SMs) a 3000 x 3000 softmax over
// dim 0 then runs 375 blocks of 8 columns, not 94 of 32. The 8 and the 4: memory_config.h.
inline int column_tile(int64_t outer, int64_t inner, int max_tx, int sms) {
  const int64_t enough_blocks = int64_t{CVT_SOFTMAX_BLOCKS_PER_SM} * sms;
  int tx = 1;
  while (tx < CVT_SOFTMAX_COLUMNS_FIRST && tx < inner && tx < max_tx) tx *= 2;
  while (tx < max_tx && outer * ceil_div(inner, 2 * tx) >= enough_blocks) tx *= 2;
  return tx;
}

// A 2-D block (blockDim.x columns, blockDim.y a power of two of threads per column):
// every thread gets op folded over the blockDim.y threads of its column. `red` holds
// blockDim.x * blockDim.y floats of shared memory. A tree over threadIdx.y: at each step
// the lower half folds in the upper half, one __syncthreads per step.
template <typename Op>
__device__ __forceinline__ float column_allreduce(float v, Op op, float* red) {
  const int tx = threadIdx.x, ty = threadIdx.y, tx_count = blockDim.x;
  __syncthreads();  // a previous call may still be reading red[tx]
  red[ty * tx_count + tx] = v;
  __syncthreads();
  for (int half = blockDim.y / 2; half > 0; half >>= 1) {
    if (ty < half) red[ty * tx_count + tx] = op(red[ty * tx_count + tx], red[(ty + half) * tx_count + tx]);
    __syncthreads();
  }
  return red[tx];
}

}  // namespace cvt
