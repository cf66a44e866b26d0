// What the split-K paths share (cuda/matmul_split_k.cu at 16 bits, cuda/matmul_split_k_tf32.cu
// at tf32, cuda/matmul_split_k_fp32.cu at fp32): how many splits, the blocks the GPU holds,
// their workspace, and the kernels that add the float32 partial tiles in split order.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "common.cuh"
#include "mma.cuh"        // pack_pair
#include "workspace.cuh"  // workspace_alloc

namespace cvt {

// SMs x blocks per SM of `kernel` (`threads` threads, `smem` bytes), asked once per device.
template <auto kernel>
static cudaError_t resident_blocks(int threads, int smem, int* blocks) {
  static int fits[64] = {};
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  if (device < 0 || device >= 64) return cudaErrorInvalidDevice;
  if (fits[device] == 0) {
    int sms = 0, per_sm = 0;
    if ((err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) !=
            cudaSuccess ||
        (err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem)) !=
            cudaSuccess)
      return err;
    fits[device] = sms * (per_sm > 0 ? per_sm : 1);
  }
  *blocks = fits[device];
  return cudaSuccess;
}

// The number of splits of an M x N x K product in BM x BN tiles and k tiles of BK, values of
// `bytes` bytes, on a GPU that holds `blocks` blocks: min(blocks / tiles, k_tiles / min_run,
// the most splits whose float partials are no more than the compulsory bytes), at least 1,
// then evened out so that no split is empty. bindings/auto.py repeats it (splits()).
inline int64_t split_count(int64_t M, int64_t N, int64_t K, int BM, int BN, int BK, int min_run,
                           int bytes, int64_t blocks) {
  const int64_t tiles = ceil_div(M, BM) * ceil_div(N, BN), k_tiles = ceil_div(K, BK);
  int64_t splits = blocks / tiles;
  const int64_t by_run = k_tiles / min_run;
  const int64_t by_bytes = (M * K + K * N + M * N) * bytes / (M * N * 4);
  if (by_run < splits) splits = by_run;
  if (by_bytes < splits) splits = by_bytes;
  if (splits < 1) return 1;
  return ceil_div(k_tiles, ceil_div(k_tiles, splits));
}

// C = the sum of the S partial slices of `values` floats each, in split order, rounded once
// to T: four values per thread and step (values % 4 == 0 and C 16-byte aligned on the paths'
// TMA inputs, so float4 loads and 8- or 16-byte stores stay aligned). The slices' loads go
// out 8 at a time, then are added in order: one dependent load per split would cost a
// memory latency each, over 100 splits at 128 x 128 x 131072.
template <class T>
__global__ void __launch_bounds__(256)
split_k_sum(const float* __restrict__ partials, T* __restrict__ C, int64_t values, int splits) {
  constexpr int kBatch = 8;
  for (int64_t i = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
       i < values; i += static_cast<int64_t>(gridDim.x) * blockDim.x * 4) {
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int s0 = 0; s0 < splits; s0 += kBatch) {
      float4 p[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j)
        if (s0 + j < splits)
          p[j] = *reinterpret_cast<const float4*>(&partials[(s0 + j) * values + i]);
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (s0 + j >= splits) break;
        sum.x += p[j].x;
        sum.y += p[j].y;
        sum.z += p[j].z;
        sum.w += p[j].w;
      }
    }
    if constexpr (std::is_same_v<T, float>) {
      *reinterpret_cast<float4*>(&C[i]) = sum;
    } else {
      uint2 out;
      out.x = pack_pair<T>(sum.x, sum.y);
      out.y = pack_pair<T>(sum.z, sum.w);
      *reinterpret_cast<uint2*>(&C[i]) = out;
    }
  }
}

// Launches split_k_sum<T> for `values` floats in `splits` slices on `blocks` x 8 blocks at most.
template <class T>
static cudaError_t launch_split_k_sum(const float* partials, T* C, int64_t values, int64_t splits,
                                      int blocks, cudaStream_t stream) {
  const int64_t steps = ceil_div(values, 4 * 256);
  const int64_t grid = steps < 8LL * blocks ? steps : 8LL * blocks;
  split_k_sum<T><<<static_cast<unsigned>(grid), 256, 0, stream>>>(partials, C, values,
                                                                  static_cast<int>(splits));
  return cudaGetLastError();
}

// C = the sum of the S partial slices of `values` floats each, in split order: one value
// per thread and step, for a C that split_k_sum's float4 steps cannot take (values % 4 != 0
// or C off 16 bytes: the fp32 path at any N). Loads 8 at a time, added in order, as there.
template <class T>
__global__ void __launch_bounds__(256)
split_k_sum_scalar(const float* __restrict__ partials, T* __restrict__ C, int64_t values,
                   int splits) {
  constexpr int kBatch = 8;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < values;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float sum = 0.0f;
    for (int s0 = 0; s0 < splits; s0 += kBatch) {
      float p[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j)
        if (s0 + j < splits) p[j] = partials[(s0 + j) * values + i];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (s0 + j >= splits) break;
        sum += p[j];
      }
    }
    if constexpr (std::is_same_v<T, float>) C[i] = sum;
    else C[i] = static_cast<T>(sum);
  }
}

// launch_split_k_sum where C allows it (values % 4 == 0, C 16-byte aligned), else
// split_k_sum_scalar, on `blocks` x 8 blocks at most.
template <class T>
static cudaError_t launch_split_k_sum_any(const float* partials, T* C, int64_t values,
                                          int64_t splits, int blocks, cudaStream_t stream) {
  if (values % 4 == 0 && reinterpret_cast<uintptr_t>(C) % 16 == 0)
    return launch_split_k_sum<T>(partials, C, values, splits, blocks, stream);
  const int64_t steps = ceil_div(values, 256);
  const int64_t grid = steps < 8LL * blocks ? steps : 8LL * blocks;
  split_k_sum_scalar<T><<<static_cast<unsigned>(grid), 256, 0, stream>>>(
      partials, C, values, static_cast<int>(splits));
  return cudaGetLastError();
}

}  // namespace cvt
