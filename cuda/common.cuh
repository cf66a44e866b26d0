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

// CUDA caps gridDim.x at 2^31 - 1 blocks, gridDim.y and gridDim.z at 65535. A kernel
// whose blocks form gy rows of gx (a row of tiles of C per row of blocks, say) would refuse
// a long C if it put its rows on y alone. Instead the launcher folds them into (y, z):
// fold_grid launches ceil(gy / Y) slabs along z of Y <= 65535 rows along y each, and the
// kernel reads its row as block_y() = blockIdx.y + gridDim.y * blockIdx.z. CUDA numbers
// the blocks of a grid x fastest, then y, then z, so the folded grid is the same sequence
// of blocks as the unfolded one: block b = block_y() * gridDim.x + blockIdx.x in both. The
// block order a kernel relies on is unchanged, and a grid of at most 65535 rows is launched
// as before (z = 1). The last slab may reach past row gy (by fewer than z rows): a kernel
// returns at once in a block with block_y() >= gy. Rows now reach 65535 x 65535 (~2^32),
// more than any C with dimensions below 2^31 needs.
// CVT_MAX_GRID_YZ: CUDA's 65535, lowered only by the CPU emulator's tests
// (tests/cpu/test_ffma_rungs.py) so that a small C already folds.
#ifndef CVT_MAX_GRID_YZ
#define CVT_MAX_GRID_YZ 65535
#endif
constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kMaxGridYZ = CVT_MAX_GRID_YZ;

// The launcher's half: the grid of gx x gy blocks, gy folded into (y, z). False (the
// launcher returns cudaErrorInvalidConfiguration, never a truncated grid) only past
// gx = 2^31 - 1 or gy = 65535 x 65535.
inline bool fold_grid(int64_t gx, int64_t gy, dim3* grid) {
  const int64_t gz = ceil_div(gy, kMaxGridYZ);
  if (gx < 1 || gy < 1 || gx > kMaxGridX || gz > kMaxGridYZ) return false;
  *grid = dim3(static_cast<unsigned>(gx), static_cast<unsigned>(ceil_div(gy, gz)),
               static_cast<unsigned>(gz));
  return true;
}

// The kernel's half: this block's row of the unfolded grid (blockIdx.y when z = 1). In
// 32-bit arithmetic: at most 65534 + 65535 * 65534 < 2^32.
__device__ __forceinline__ int64_t block_y() { return blockIdx.y + gridDim.y * blockIdx.z; }

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
