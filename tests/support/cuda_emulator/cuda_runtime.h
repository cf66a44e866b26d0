// CPU emulation of the parts of CUDA that the matmul kernels of cuda/ use, so that their
// index arithmetic, masks, barriers and cp.async groups run on a machine without a GPU
// (tests/cpu/test_ffma_rungs.py builds them with g++ and AddressSanitizer).
//
// One std::thread per CUDA thread; the blocks of a grid run one after another;
// __syncthreads() is a std::barrier of the block; __shared__ arrays are function-local
// statics (one copy, shared by the block's threads); dynamic shared memory is one static
// buffer, poisoned with NaN before each block. Kernel launches (`k<<<g, b, s, st>>>(...)`)
// are rewritten into cvt_emu::launch(...) by emulate.py before compiling.
// What it cannot show: timing, bank conflicts, and races that a barrier in the wrong place
// would cause only under the GPU's scheduling (compute-sanitizer's racecheck, on the GPU).
#pragma once
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static
#define __restrict__

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 gridDim, blockDim;

typedef int cudaError_t;
typedef void* cudaStream_t;
enum { cudaSuccess = 0, cudaErrorInvalidConfiguration = 9, cudaErrorUnknown = 999 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
template <class F>
cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int) { return cudaSuccess; }

namespace cvt_emu {
inline thread_local std::barrier<>* block_barrier = nullptr;
alignas(16) inline float dynamic_smem[64 * 1024];  // 256 KB, more than any SM has

template <class Kernel, class... Args>
void launch(dim3 grid, dim3 block, size_t smem_bytes, Kernel kernel, Args... args) {
  if (smem_bytes > sizeof(dynamic_smem)) {
    std::fprintf(stderr, "emulator: %zu bytes of dynamic shared memory\n", smem_bytes);
    std::abort();
  }
  gridDim = grid;
  blockDim = block;
  const unsigned n = block.x * block.y * block.z;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        std::memset(dynamic_smem, 0xFF, smem_bytes);  // NaN: a read of a stale value shows
        std::barrier<> barrier(n);
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < n; ++t)
          threads.emplace_back([&, t] {
            blockIdx = dim3(bx, by, bz);
            threadIdx = dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
            block_barrier = &barrier;
            kernel(args...);
          });
        for (auto& th : threads) th.join();
      }
}
}  // namespace cvt_emu

inline void __syncthreads() { cvt_emu::block_barrier->arrive_and_wait(); }
