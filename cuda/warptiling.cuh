// The thread layout of the warptiled matmuls (matmul_v5_warptiling.cu and the rungs after
// it): a BM x BN block tile cut into WM x WN warp tiles, each holding 32 thread tiles of
// TM x TN, made of 4 x 4 pieces so that every shared-memory read is one float4. See the
// "layout" paragraph of matmul_v5_warptiling.cu for where each piece sits.
#pragma once

namespace cvt {

template <int BM, int BN, int WM, int WN, int TM, int TN>
struct WarpTiling {
  static constexpr int WARPS = (BM / WM) * (BN / WN);
  static constexpr int THREADS = 32 * WARPS;
  static constexpr int LANES_M = WM / TM, LANES_N = WN / TN;  // lanes along each side of a warp tile
  static constexpr int PM = TM / 4, PN = TN / 4;              // 4 x 4 pieces per thread
  // 64 accumulators or fewer: 128 registers per thread, 512 resident threads per SM.
  // More (e.g. 16 x 8): up to 255 registers, one block per SM.
  static constexpr int MIN_BLOCKS = (TM * TN <= 64 && THREADS <= 512) ? 512 / THREADS : 1;
  static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
  static_assert(WM % TM == 0 && WN % TN == 0 && LANES_M * LANES_N == 32,
                "a warp tile holds 32 thread tiles");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of 4 x 4 pieces");
};

}  // namespace cvt
