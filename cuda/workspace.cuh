// Workspace for partial sums (t5, the split-K paths): from a memory pool of the launchers'
// own, stream-ordered (freed after the kernel on the same stream, so concurrent streams never
// share it), kept by the pool between launches (no release threshold).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>

namespace cvt {

inline cudaError_t workspace_alloc(void** ptr, size_t bytes, cudaStream_t stream) {
  static std::mutex lock;
  static cudaMemPool_t pools[64] = {};
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  if (device < 0 || device >= 64) return cudaErrorInvalidDevice;
  {
    std::lock_guard<std::mutex> guard(lock);
    if (pools[device] == nullptr) {
      cudaMemPoolProps props = {};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = device;
      cudaMemPool_t pool = nullptr;
      if ((err = cudaMemPoolCreate(&pool, &props)) != cudaSuccess) return err;
      uint64_t keep = UINT64_MAX;
      if ((err = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep)) !=
          cudaSuccess)
        return err;
      pools[device] = pool;
    }
  }
  return cudaMallocFromPoolAsync(ptr, bytes, pools[device], stream);
}

}  // namespace cvt
