// Small helpers shared by every kernel in cuda/. No torch here: these files build
// with plain nvcc (CMake driver) as well as inside the torch extension.
#pragma once
#include <cstdint>
#include <cuda_runtime.h>

namespace cvt {

// Number of tiles of size `tile` needed to cover `n` elements (0 for n = 0).
__host__ __device__ constexpr int64_t ceil_div(int64_t n, int64_t tile) {
  return (n + tile - 1) / tile;
}

// CUDA caps gridDim.y and gridDim.z at 65535 blocks (gridDim.x at 2^31 - 1).
constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kMaxGridYZ = 65535;

// A launcher calls this before launching: an over-long grid is reported as
// cudaErrorInvalidConfiguration (the bindings turn it into a readable message)
// instead of being silently truncated.
inline bool grid_fits(int64_t gx, int64_t gy) {
  return gx >= 1 && gy >= 1 && gx <= kMaxGridX && gy <= kMaxGridYZ;
}

}  // namespace cvt
