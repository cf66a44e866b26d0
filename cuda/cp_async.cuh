// cp.async: copies from global to shared memory that do not pass through registers
// (PTX ISA, "cp.async", sm_80 and later). A thread issues copies, closes them into a
// group with cp_async_commit(), and later waits with cp_async_wait<N>() until at most N
// of its most recent groups are still in flight. The wait covers only the calling
// thread's copies: a __syncthreads() after it makes every thread's copies visible to the
// whole block.
//
// On GPUs before sm_80 (no cp.async) the copy is an ordinary load and store and the group
// calls do nothing: a copy that completes at once is one of the behaviours cp.async
// allows, so a kernel written for it stays correct there (only slower).
#pragma once
#include "common.cuh"

namespace cvt {

// Copies W consecutive floats (W = 1, 2, 4: 4, 8, 16 bytes) from global `src` to shared
// `dst`; both must be aligned to 4 * W bytes. 16-byte copies take the .cg path (cached in
// L2 only: the block reads the tile from shared memory, never again from L1); 4- and
// 8-byte copies must take .ca, the only form PTX allows for sizes below 16.
// L1: 16-byte copies take .ca too, cached in L1, for data that other blocks on the SM
// read next.
template <int W, bool L1 = false>
__device__ __forceinline__ void cp_async(float* dst, const float* src) {
  static_assert(W == 1 || W == 2 || W == 4, "cp.async copies 4, 8 or 16 bytes here");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if constexpr (W == 4 && !L1) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(src), "n"(4 * W)
                 : "memory");
  }
#else
  *reinterpret_cast<Floats<W>*>(dst) = *reinterpret_cast<const Floats<W>*>(src);
#endif
}

// Closes the copies this thread issued since the last commit into one group (possibly
// empty: an empty group completes at once, and keeps the group count the same in every
// iteration of a pipeline).
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

}  // namespace cvt
