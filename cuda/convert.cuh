// The element types of the kernels to and from float32, their accumulators' type: float32,
// float16 and bfloat16 in, float32 out; float32 in, rounded to nearest out. Shared by the
// memory-bound ops (memory_common.cuh) and the skinny matmul path (matmul_skinny.cu).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace cvt {

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

}  // namespace cvt
