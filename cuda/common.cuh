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

// v6's grouped order (cuda/matmul_v6_pipelined.cu) on a persistent grid: tile u of a
// tiles_m x tiles_n grid of tiles, GROUP rows of tiles walked column by column, is tile
// (row, col).
template <int GROUP>
__host__ __device__ inline void grouped_tile(int64_t u, int64_t tiles_m, int64_t tiles_n,
                                             int64_t& row, int64_t& col) {
  const int64_t first = u / (GROUP * tiles_n) * GROUP;
  const int64_t rows = tiles_m - first < GROUP ? tiles_m - first : GROUP;
  row = first + (u % (GROUP * tiles_n)) % rows;
  col = (u % (GROUP * tiles_n)) / rows;
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

// W consecutive floats moved by ONE instruction: Floats<4> is 16-byte aligned, so a load
// or store of it compiles to LD.128/ST.128 (LDG.128, LDS.128, STG.128); Floats<1> is a
// plain float. A kernel templated on W writes its copy loops once for both widths, and its
// launcher picks W (see vector_path_ok).
template <int W>
struct alignas(4 * W) Floats {
  float v[W];
};

// The 128-bit path of a row-major matmul is legal when every row of A (K floats), B and
// C (N floats) starts on a 16-byte boundary: the three pointers are 16-byte aligned and
// K and N are multiples of 4. A launcher asks this once and instantiates its kernel with
// W = 4 or W = 1; the kernel itself has no alignment branch.
inline bool vector_path_ok(const float* A, const float* B, const float* C, int64_t N,
                           int64_t K) {
  const auto aligned = [](const float* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return aligned(A) && aligned(B) && aligned(C) && N % 4 == 0 && K % 4 == 0;
}

}  // namespace cvt
