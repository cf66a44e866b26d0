// The 16-bit float types of the CPU emulator (stand in for the CUDA toolkit's cuda_fp16.h
// and cuda_bf16.h, which the tensor-core rungs include): bit patterns with conversions that
// round to nearest even as the GPU's do. Only what cuda/matmul_t*.cu and mma.cuh use.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

struct __half {
  unsigned short x;
};
struct __half2 {
  __half lo, hi;
};
struct __nv_bfloat16 {
  unsigned short x;
};
struct __nv_bfloat162 {
  __nv_bfloat16 lo, hi;
};

namespace cvt_emu {
inline unsigned float_bits(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace cvt_emu

// bfloat16 is the top half of a float32: round the low 16 bits away, to nearest even.
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  const unsigned u = cvt_emu::float_bits(f);
  if (std::isnan(f)) return {static_cast<unsigned short>((u >> 16) | 0x40)};
  const unsigned rounded = u + 0x7FFF + ((u >> 16) & 1);
  return {static_cast<unsigned short>(rounded >> 16)};
}
inline float __bfloat162float(__nv_bfloat16 b) { return cvt_emu::bits_float(unsigned(b.x) << 16); }
inline __nv_bfloat162 __floats2bfloat162_rn(float lo, float hi) {
  return {__float2bfloat16_rn(lo), __float2bfloat16_rn(hi)};
}

// float16: 1 sign, 5 exponent, 10 fraction bits. Through double so that one rounding, to
// nearest even, takes the float to the nearest half (std::nearbyint in the default mode).
inline __half __float2half_rn(float f) {
  const unsigned short sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (std::isnan(f)) return {static_cast<unsigned short>(sign | 0x7E00)};
  if (a >= 65520.0) return {static_cast<unsigned short>(sign | 0x7C00)};  // inf
  if (a < std::ldexp(1.0, -14)) {                                         // subnormal or 0
    return {static_cast<unsigned short>(sign | static_cast<unsigned>(std::nearbyint(a * std::ldexp(1.0, 24))))};
  }
  int e;
  const double m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  unsigned frac = static_cast<unsigned>(std::nearbyint(m * 2048.0));  // 11 bits with the 1
  if (frac == 2048) {
    frac = 1024;
    ++e;
  }
  if (e + 14 >= 31) return {static_cast<unsigned short>(sign | 0x7C00)};
  return {static_cast<unsigned short>(sign | ((e + 14) << 10) | (frac - 1024))};
}
inline float __half2float(__half h) {
  const unsigned sign = h.x & 0x8000, exp = (h.x >> 10) & 31, frac = h.x & 1023;
  double v;
  if (exp == 0) v = std::ldexp(static_cast<double>(frac), -24);
  else if (exp == 31) v = frac ? NAN : INFINITY;
  else v = std::ldexp(static_cast<double>(frac | 1024), static_cast<int>(exp) - 25);
  return static_cast<float>(sign ? -v : v);
}
inline __half2 __floats2half2_rn(float lo, float hi) {
  return {__float2half_rn(lo), __float2half_rn(hi)};
}
