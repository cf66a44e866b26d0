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
//      instruction (LDG.128 / STG.128): Vec<T, VEC> is VEC elements with the alignment of
//      their total size, so `*reinterpret_cast<const Vec<T, VEC>*>(p)` is one load. It is
//      legal only when p is a multiple of 16 bytes; the launchers check that at run time
//      (aligned16) and instantiate the same kernel with VEC = 1 otherwise.
//   3. Reductions. warp_allreduce folds 32 values with shuffles (no shared memory);
//      block_allreduce folds a whole 1-D block: each warp folds its 32 values, warp
//      leaders write one value each to shared memory, warp 0 folds those.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common.cuh"
#include "memory_launchers.h"

namespace cvt {

// ---------------------------------------------------------------------------------------
// 1. Types
// ---------------------------------------------------------------------------------------

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// Elements of type T in one 16-byte access: 4 floats, 8 halves or 8 bfloat16s.
template <typename T> constexpr int kVec16 = static_cast<int>(16 / sizeof(T));

// ---------------------------------------------------------------------------------------
// 2. Vectors
// ---------------------------------------------------------------------------------------

template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Vec {
  T v[VEC];
};

template <typename T, int VEC>
__device__ __forceinline__ Vec<T, VEC> load_vec(const T* p) {
  return *reinterpret_cast<const Vec<T, VEC>*>(p);
}

template <typename T, int VEC>
__device__ __forceinline__ void store_vec(T* p, const Vec<T, VEC>& v) {
  *reinterpret_cast<Vec<T, VEC>*>(p) = v;
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

template <typename Op>
__device__ __forceinline__ float warp_allreduce(float v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Every thread of a 1-D block (blockDim.x a multiple of 32) gets op folded over the block.
// `scratch` is 33 floats of shared memory; the first __syncthreads makes a second call
// with the same scratch safe (nobody still reads scratch[32] of the previous one).
template <typename Op>
__device__ __forceinline__ float block_allreduce(float v, Op op, float identity, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_allreduce(v, op);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float w = lane < warps ? scratch[lane] : identity;
    w = warp_allreduce(w, op);
    if (lane == 0) scratch[32] = w;
  }
  __syncthreads();
  return scratch[32];
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
