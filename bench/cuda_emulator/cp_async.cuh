// Emulated cp.async (stands in for cuda/cp_async.cuh: emulate.py puts the kernels beside
// this file, so "cp_async.cuh" resolves here first). Copies are queued per thread and done
// as LATE as the PTX rules allow, at the wait that releases their group: a kernel that
// reads a stage before waiting for it reads the NaN poison or an old tile, and fails.
#pragma once
#include "common.cuh"

namespace cvt {

struct EmulatedCopy {
  float* dst;
  const float* src;
  int floats;
};
inline thread_local std::vector<EmulatedCopy> open_group;
inline thread_local std::deque<std::vector<EmulatedCopy>> committed;

template <int W, bool L1 = false>
inline void cp_async(float* dst, const float* src) {
  static_assert(W == 1 || W == 2 || W == 4, "cp.async copies 4, 8 or 16 bytes here");
  if (reinterpret_cast<uintptr_t>(src) % (4 * W) || reinterpret_cast<uintptr_t>(dst) % (4 * W)) {
    std::fprintf(stderr, "emulator: cp.async of %d bytes from a misaligned address\n", 4 * W);
    std::abort();
  }
  open_group.push_back({dst, src, W});
}

inline void cp_async_commit() {
  committed.push_back(std::move(open_group));
  open_group.clear();
}

template <int N>
inline void cp_async_wait() {
  while (committed.size() > static_cast<size_t>(N)) {
    for (const auto& c : committed.front()) std::memcpy(c.dst, c.src, 4 * c.floats);
    committed.pop_front();
  }
}

}  // namespace cvt
