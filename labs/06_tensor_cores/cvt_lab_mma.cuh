// Lab 6's tensor-core instruction, one warp wide: D += A B for a 16 x 8 tile of D, with A
// 16 x 16 and B 16 x 8 in float16 and D in float32 (PTX: mma.sync.aligned.m16n8k16.row.col
// .f32.f16.f16.f32). Include it as given; the grader compiles your file with its own copy.
//
// Each of the warp's 32 lanes holds a part of every matrix, in registers. With
// g = lane / 4 and t = lane % 4 (the PTX ISA's "groupID" and "threadID_in_group"):
//
//   a[0] = A(g,     2t .. 2t+1)      a[1] = A(g + 8, 2t .. 2t+1)
//   a[2] = A(g,     2t+8 .. 2t+9)    a[3] = A(g + 8, 2t+8 .. 2t+9)
//   b[0] = B(2t .. 2t+1,   g)        b[1] = B(2t+8 .. 2t+9, g)
//   d[0], d[1] = D(g,     2t), D(g,     2t+1)
//   d[2], d[3] = D(g + 8, 2t), D(g + 8, 2t+1)
//
// where "X .. X+1" is two float16 values in one 32-bit register, the lower index in the low
// half (pack() below). All 32 lanes must call mma_m16n8k16 together.
//
// On a CPU (the grader's CUDA emulator, CVT_EMULATED) the same call meets the warp's other
// 31 threads and computes each lane's part exactly as the instruction does (products of two
// float16 values are exact in float32).
#pragma once
#include <cuda_fp16.h>

#ifdef CVT_EMULATED
#include <cuda_runtime.h>

namespace cvt_lab {
inline unsigned pack(__half lo, __half hi) { return lo.x | (unsigned(hi.x) << 16); }

inline float half_of(unsigned reg, int high) {
  return __half2float(__half{static_cast<unsigned short>(high ? reg >> 16 : reg & 0xFFFF)});
}

inline void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  cvt_emu::WarpExchange& w = *cvt_emu::warp_exchange;
  const unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
  for (int i = 0; i < 4; ++i) w.a[lane][i] = a[i];
  w.b[lane][0] = b[0];
  w.b[lane][1] = b[1];
  w.meet.arrive_and_wait();
  const auto A = [&](int row, int k) {   // the lane and register that hold A(row, k)
    return half_of(w.a[(row % 8) * 4 + (k % 8) / 2][(row >= 8) + 2 * (k >= 8)], k % 2);
  };
  const auto B = [&](int k, int col) {
    return half_of(w.b[col * 4 + (k % 8) / 2][k >= 8], k % 2);
  };
  const int g = lane / 4, t = lane % 4;
  for (int h = 0; h < 2; ++h)
    for (int c = 0; c < 2; ++c) {
      float sum = d[2 * h + c];
      for (int k = 0; k < 16; ++k) sum += A(g + 8 * h, k) * B(k, 2 * t + c);
      d[2 * h + c] = sum;
    }
  w.meet.arrive_and_wait();
}
}  // namespace cvt_lab

#else

namespace cvt_lab {
__device__ __forceinline__ unsigned pack(__half lo, __half hi) {
  return __half_as_ushort(lo) | (static_cast<unsigned>(__half_as_ushort(hi)) << 16);
}

__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4],
                                             const unsigned (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();   // mma.sync with float16 needs sm_80 or newer
#endif
}
}  // namespace cvt_lab

#endif
