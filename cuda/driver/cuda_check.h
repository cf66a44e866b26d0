// CUDA_CHECK for the standalone drivers: a failed CUDA call prints its name, the file and
// the line, and exits with status 2 (a wrong result exits with 1; see each driver).
#pragma once
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                          \
  do {                                                                            \
    cudaError_t err_ = (call);                                                    \
    if (err_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), \
                   __FILE__, __LINE__, cudaGetErrorString(err_));                 \
      std::exit(2);                                                               \
    }                                                                             \
  } while (0)
