// Runs the TMA rungs' staging (cuda/staging.cu) on the emulator at the shapes given on the
// command line (ROWS COLS ROWS_P COLS_P OFFSET quintuples, for 2- and 4-byte elements):
// launch_stage_pad from a source OFFSET elements off its aligned allocation into a padded,
// 16-byte aligned buffer that starts as 0xFF bytes, then launch_stage_unpad of that buffer's
// first COLS columns into a destination OFFSET elements off alignment; every element of both
// is compared with what it must be (the source's value, or zero in the pad), and the OFFSET
// elements before the destination must stay untouched. Built by tests/cpu/test_staging.py
// with staging.cu rewritten by emulate.py.
#include <cuda_runtime.h>  // the emulator's (bench/cuda_emulator/cuda_runtime.h)

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include EMULATED_KERNELS  // cuda/staging.cu, rewritten

template <class T>
static bool run(long rows, long cols, long rows_p, long cols_p, long offset) {
  std::vector<T> src_store(rows * cols + offset + 1);
  for (size_t i = 0; i < src_store.size(); ++i) src_store[i] = static_cast<T>(i * 2654435761u + 1);
  const T* src = src_store.data() + offset;
  // 16-byte aligned, filled with 0xFF: every element the kernel leaves alone stays so
  T* padded = static_cast<T*>(std::aligned_alloc(16, ((rows_p * cols_p * sizeof(T) + 15) / 16 + 1) * 16));
  std::memset(padded, 0xFF, rows_p * cols_p * sizeof(T));
  if (cvt::launch_stage_pad(src, rows, cols, padded, rows_p, cols_p, sizeof(T), nullptr) != cudaSuccess) {
    std::printf("pad refused\n");
    return false;
  }
  for (long r = 0; r < rows_p; ++r)
    for (long c = 0; c < cols_p; ++c) {
      const T want = (r < rows && c < cols) ? src[r * cols + c] : T(0);
      if (padded[r * cols_p + c] != want) {
        std::printf("pad wrong at (%ld, %ld)\n", r, c);
        return false;
      }
    }
  std::vector<T> dst_store(rows * cols + offset + 1, T(7));
  T* dst = dst_store.data() + offset;
  if (cvt::launch_stage_unpad(padded, cols_p, dst, rows, cols, sizeof(T), nullptr) != cudaSuccess) {
    std::printf("unpad refused\n");
    return false;
  }
  for (long i = 0; i < rows * cols; ++i)
    if (dst[i] != src[i]) {
      std::printf("unpad wrong at %ld\n", i);
      return false;
    }
  for (long i = 0; i < offset; ++i)
    if (dst_store[i] != T(7)) return false;
  if (dst[rows * cols] != T(7)) {
    std::printf("unpad wrote past the end\n");
    return false;
  }
  std::free(padded);
  return true;
}

int main(int argc, char** argv) {
  bool ok = true;
  for (int i = 1; i + 4 < argc; i += 5) {
    const long rows = std::atol(argv[i]), cols = std::atol(argv[i + 1]);
    const long rows_p = std::atol(argv[i + 2]), cols_p = std::atol(argv[i + 3]);
    const long offset = std::atol(argv[i + 4]);
    const bool two = run<unsigned short>(rows, cols, rows_p, cols_p, offset);
    const bool four = cols_p % 4 == 0 ? run<unsigned>(rows, cols, rows_p, cols_p, offset) : true;
    std::printf("staging %ld x %ld into %ld x %ld offset %ld %s\n", rows, cols, rows_p, cols_p,
                offset, two && four ? "ok" : "WRONG");
    ok = ok && two && four;
  }
  return ok ? 0 : 1;
}
