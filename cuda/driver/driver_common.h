// What the standalone drivers (matmul_driver.cu, tensor_core_driver.cu) share: timing a launch the way the harness does, and reading
// M N K triples from the command line.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"

// The times in ms, sorted, of `reps` launches (after two warm-up launches), each timed alone
// with CUDA events, with L2 flushed before each (a memset of 4x its size) so that every
// launch reads its inputs from DRAM. `launch()` enqueues one launch on `stream` and returns
// its cudaError_t.
template <class Launch>
std::vector<float> launch_times_ms(Launch&& launch, int reps, cudaStream_t stream) {
  int l2_bytes = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0));
  const size_t flush_bytes = 4 * static_cast<size_t>(l2_bytes);  // evicts A, B and C from L2
  void* flush;
  CUDA_CHECK(cudaMalloc(&flush, flush_bytes));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int r = -2; r < reps; ++r) {  // two warm-up launches
    CUDA_CHECK(cudaMemsetAsync(flush, r & 0xFF, flush_bytes, stream));
    CUDA_CHECK(cudaEventRecord(start, stream));
    CUDA_CHECK(launch());
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (r >= 0) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  CUDA_CHECK(cudaFree(flush));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return times;
}

// Their median (launch_times_ms).
template <class Launch>
double median_launch_ms(Launch&& launch, int reps, cudaStream_t stream) {
  const std::vector<float> times = launch_times_ms(launch, reps, stream);
  return times[times.size() / 2];
}

// Reads the integers of argv[i..] up to the first option ("-...") into `dims`, advancing i:
// M N K triples, each >= 0. Prints why and returns false when they are not.
inline bool read_shapes(int argc, char** argv, int& i, const char* tool, std::vector<int64_t>& dims) {
  for (; i < argc && argv[i][0] != '-'; ++i) {
    char* end;
    const long long d = std::strtoll(argv[i], &end, 10);
    if (*end != '\0' || d < 0) {
      std::fprintf(stderr, "%s: M, N, K must be integers >= 0, got '%s'\n", tool, argv[i]);
      return false;
    }
    dims.push_back(d);
  }
  if (dims.empty() || dims.size() % 3 != 0) {
    std::fprintf(stderr, "%s: shapes come as M N K triples, got %zu numbers\n", tool, dims.size());
    return false;
  }
  return true;
}
