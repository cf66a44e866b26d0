// Emulated tensor-core building blocks (stand in for cuda/mma.cuh: emulate.py puts the
// kernels beside this file). ldmatrix and mma.sync are warp-wide: the warp's 32 threads
// meet at their warp's barrier (cuda_runtime.h, WarpExchange), hand over their row address
// or their fragments, meet again, and each takes its own part exactly as the PTX ISA
// defines the fragments (the layout is written out in cuda/mma.cuh). Products of two
// 16-bit values are exact in float32; the emulated mma adds them in k order.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "common.cuh"
#include "cp_async.cuh"

namespace cvt {

inline bool device_has_sm80() { return true; }

inline void cp_async_16(void* dst, const void* src) {
  cp_async<4>(static_cast<float*>(dst), static_cast<const float*>(src));
}

// Shared addresses are offsets into the block's dynamic shared memory, as on the GPU.
inline unsigned smem_address(const void* p) {
  return static_cast<unsigned>(static_cast<const char*>(p) -
                               reinterpret_cast<const char*>(cvt_emu::block_smem()));
}

namespace emu {
inline unsigned lane() { return threadIdx.x % 32; }
inline unsigned short element(const void* row, int column) {
  unsigned short v;
  std::memcpy(&v, static_cast<const char*>(row) + 2 * column, 2);
  return v;
}
inline unsigned pair(unsigned short lo, unsigned short hi) { return lo | (unsigned(hi) << 16); }

template <bool TRANS>
inline void ldmatrix(unsigned (&r)[4], unsigned address) {
  cvt_emu::WarpExchange& w = *cvt_emu::warp_exchange;
  const unsigned l = lane();
  if (address % 16) {
    std::fprintf(stderr, "emulator: ldmatrix row address %u is not 16-byte aligned\n", address);
    std::abort();
  }
  w.address[l] = reinterpret_cast<const char*>(cvt_emu::block_smem()) + address;
  w.meet.arrive_and_wait();
  for (unsigned i = 0; i < 4; ++i) {
    const void* const* rows = &w.address[8 * i];  // matrix i: rows named by lanes 8i..8i+7
    if (!TRANS) {
      r[i] = pair(element(rows[l / 4], 2 * (l % 4)), element(rows[l / 4], 2 * (l % 4) + 1));
    } else {
      r[i] = pair(element(rows[2 * (l % 4)], l / 4), element(rows[2 * (l % 4) + 1], l / 4));
    }
  }
  w.meet.arrive_and_wait();
}

template <class T>
inline float value(unsigned reg, int half) {
  const unsigned short bits = half ? reg >> 16 : reg & 0xFFFF;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float({bits});
  else return __half2float({bits});
}
}  // namespace emu

inline void ldmatrix_x4(unsigned (&r)[4], unsigned address) { emu::ldmatrix<false>(r, address); }
inline void ldmatrix_x4_trans(unsigned (&r)[4], unsigned address) { emu::ldmatrix<true>(r, address); }

template <class T>
inline void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  cvt_emu::WarpExchange& w = *cvt_emu::warp_exchange;
  const unsigned l = emu::lane();
  for (int i = 0; i < 4; ++i) w.a[l][i] = a[i];
  w.b[l][0] = b0;
  w.b[l][1] = b1;
  w.meet.arrive_and_wait();
  // A(row, k): lane (row % 8) * 4 + (k % 8) / 2, register (row >= 8) + 2 (k >= 8), half k % 2;
  // B(k, col): lane col * 4 + (k % 8) / 2, register (k >= 8), half k % 2.
  const auto A = [&](int row, int k) {
    return emu::value<T>(w.a[(row % 8) * 4 + (k % 8) / 2][(row >= 8) + 2 * (k >= 8)], k % 2);
  };
  const auto B = [&](int k, int col) {
    return emu::value<T>(w.b[col * 4 + (k % 8) / 2][k >= 8], k % 2);
  };
  const int g = l / 4, q = l % 4;
  for (int h = 0; h < 2; ++h)
    for (int c = 0; c < 2; ++c) {
      float sum = d[2 * h + c];
      for (int k = 0; k < 16; ++k) sum += A(g + 8 * h, k) * B(k, 2 * q + c);
      d[2 * h + c] = sum;
    }
  w.meet.arrive_and_wait();
}

template <class T>
inline T round_to(float x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(x);
  else return __float2half_rn(x);
}

template <class T>
inline unsigned pack_pair(float lo, float hi) {
  return emu::pair(round_to<T>(lo).x, round_to<T>(hi).x);
}

}  // namespace cvt
