// Counted global memory for the labs' CUDA kernels on the CPU emulator (bench/grading/
// cuda_lab.py): each pointer parameter of a __global__ function is rewritten into
// cvt_emu::counted<T>, so that every element the kernel reads or writes through it is
// counted, per element and per byte, as the Triton interpreter counts tl.load and tl.store
// (bench/counted.py).
//
// What it counts: an element read through p[i] or *p (converted to its value) is a load; an
// element assigned (p[i] = v) is a store; p[i] += v is one of each. Shared memory and
// registers are not global traffic and are not counted. Where it departs from the GPU: it
// counts what the kernel asks for, element by element, not the 32-byte sectors the memory
// system moves, and no cache stands between (a second read of the same element counts
// again, as a second tl.load does). Pointer arithmetic on a parameter stays counted
// (`auto row = A + r * K`), but a raw pointer taken from one (`const float* row = A + r * K`,
// `&A[i]`, a cast to float4*) escapes the count: the escape itself is counted, and the grader
// does not grade traffic where there was one.
#pragma once
#include <atomic>
#include <cstdint>
#include <type_traits>

namespace cvt_emu {
// The tensors a call was given (the grader registers them: cuda_lab.py): an access outside
// all of them is counted apart, and the first one's address kept, so that the grader can
// name a read past an input, or a store past the output.
constexpr int kMaxExtents = 8;
inline const char* extent_begin[kMaxExtents];
inline const char* extent_end[kMaxExtents];
inline int extents = 0;
inline std::atomic<long long> outside_loads{0}, outside_stores{0};
inline std::atomic<const char*> first_outside_load{nullptr}, first_outside_store{nullptr};

inline bool inside(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  if (extents == 0) return true;
  for (int i = 0; i < extents; ++i)
    if (c >= extent_begin[i] && c + bytes <= extent_end[i]) return true;
  return false;
}
inline void note_outside(const void* p, bool store) {
  (store ? outside_stores : outside_loads) += 1;
  const char* expected = nullptr;
  (store ? first_outside_store : first_outside_load)
      .compare_exchange_strong(expected, static_cast<const char*>(p));
}

inline std::atomic<long long> counted_loads{0}, counted_stores{0};
inline std::atomic<long long> counted_load_bytes{0}, counted_store_bytes{0};
inline std::atomic<long long> counted_escapes{0};

template <class T>
struct counted {
  using value_type = std::remove_const_t<T>;
  T* p = nullptr;

  // one element: a load where it is read, a store where it is assigned
  struct element {
    T* p;
    operator value_type() const {
      counted_loads += 1;
      counted_load_bytes += sizeof(T);
      if (!inside(p, sizeof(T))) note_outside(p, false);
      return *p;
    }
    const element& operator=(value_type v) const {
      counted_stores += 1;
      counted_store_bytes += sizeof(T);
      if (!inside(p, sizeof(T))) {   // never written: it would land in memory of others
        note_outside(p, true);
        return *this;
      }
      *p = v;
      return *this;
    }
    const element& operator=(const element& other) const { return *this = value_type(other); }
    const element& operator+=(value_type v) const { return *this = value_type(*this) + v; }
    const element& operator-=(value_type v) const { return *this = value_type(*this) - v; }
    const element& operator*=(value_type v) const { return *this = value_type(*this) * v; }
    T* operator&() const {
      counted_escapes += 1;
      return p;
    }
  };

  counted() = default;
  counted(T* q) : p(q) {}
  template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  counted(counted<U> q) : p(q.p) {}
  element operator[](long long i) const { return {p + i}; }
  element operator*() const { return {p}; }
  counted operator+(long long i) const { return {p + i}; }
  counted operator-(long long i) const { return {p - i}; }
  counted& operator+=(long long i) { p += i; return *this; }
  counted& operator-=(long long i) { p -= i; return *this; }
  counted& operator++() { ++p; return *this; }
  explicit operator bool() const { return p != nullptr; }
  // a raw pointer: its accesses are not counted, so the escape is
  operator T*() const {
    counted_escapes += 1;
    return p;
  }
};
}  // namespace cvt_emu
