// Philox4x32-10: the counter-based random number generator of Salmon, Moraes, Dror and
// Shaw ("Parallel random numbers: as easy as 1, 2, 3", SC 2011), as Triton implements it
// in triton/language/random.py, bit for bit.
//
// A counter-based generator has no state to carry between threads: the random bits of
// "draw number c under key k" are a pure function philox(c, k). Any thread can compute
// the bits of any element directly, in any order, on any GPU (or on the CPU), and gets
// the same answer. That is what makes dropout reproducible for a seed and lets the CUDA
// kernel and its Triton twin produce identical masks:
//
//   key     = (seed & 0xffffffff, seed >> 32)
//   counter = (g & 0xffffffff, g >> 32, 0, 0)     g = element index / 4 (a "group")
//   bits    = 4 words; element 4g + j takes word j      (Triton: tl.randint4x(seed, g))
//   uniform = int32(bits) < 0 ? ~int32(bits) : int32(bits), times 4.6566127342e-10f
//             (Triton's uint_to_uniform_float: in [0, 1], uniform up to float rounding)
//
// Ten rounds, each two 32x32->64-bit multiplies (kept as hi and lo words) mixed with the
// key, the key bumped by the golden ratio constants between rounds. Known-answer values
// from the Random123 distribution are checked in tests/cpu/test_memory_models.py (Python
// reference) and by the driver (cuda/driver/memory_driver.cu).
#pragma once
#include <cstdint>
#include <cuda_runtime.h>

namespace cvt {

__host__ __device__ __forceinline__ uint32_t mulhi32(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  return __umulhi(a, b);
#else
  return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
#endif
}

__host__ __device__ __forceinline__ uint4 philox4x32_10(uint4 ctr, uint2 key) {
  constexpr uint32_t kRoundA = 0xD2511F53u, kRoundB = 0xCD9E8D57u;  // multipliers
  constexpr uint32_t kKeyA = 0x9E3779B9u, kKeyB = 0xBB67AE85u;      // key bumps
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi_b = mulhi32(kRoundB, ctr.z), lo_b = kRoundB * ctr.z;
    const uint32_t hi_a = mulhi32(kRoundA, ctr.x), lo_a = kRoundA * ctr.x;
    ctr = make_uint4(hi_b ^ ctr.y ^ key.x, lo_b, hi_a ^ ctr.w ^ key.y, lo_a);
    key.x += kKeyA;
    key.y += kKeyB;
  }
  return ctr;
}

// The four words for group g (elements 4g .. 4g+3) under `seed`.
__host__ __device__ __forceinline__ uint4 philox_group(uint64_t seed, uint64_t g) {
  return philox4x32_10(make_uint4(static_cast<uint32_t>(g), static_cast<uint32_t>(g >> 32), 0u, 0u),
                       make_uint2(static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)));
}

// Triton's uint_to_uniform_float for 32-bit words. ~x is -x - 1 without overflow.
__host__ __device__ __forceinline__ float philox_uniform(uint32_t bits) {
  int32_t x = static_cast<int32_t>(bits);
  x = x < 0 ? ~x : x;
  return static_cast<float>(x) * 4.6566127342e-10f;
}

}  // namespace cvt
