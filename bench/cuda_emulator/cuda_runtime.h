// CPU emulation of the parts of CUDA that the matmul kernels of cuda/ use, so that their
// index arithmetic, masks, barriers and cp.async groups run on a machine without a GPU
// (tests/cpu/test_ffma_rungs.py builds them with g++ and AddressSanitizer).
//
// One std::thread per CUDA thread; the blocks of a grid run one after another (the blocks
// of a cluster at once); __syncthreads() is a std::barrier of the block; __shared__ arrays
// are function-local statics (one copy, shared by the block's threads); dynamic shared
// memory is a static buffer per block of a cluster, poisoned with NaN before each block.
// Kernel launches (`k<<<g, b, s, st>>>(...)`) are rewritten into cvt_emu::launch(...) by
// emulate.py before compiling; cudaLaunchKernelEx runs clusters.
// Warp-wide instructions (ldmatrix, mma.sync: mma.cuh here) meet at a barrier of the
// warp's 32 threads and exchange their operands through the warp's slot (WarpExchange).
// What it cannot show: timing, bank conflicts, and races that a barrier in the wrong place
// would cause only under the GPU's scheduling (compute-sanitizer's racecheck, on the GPU).
#pragma once
#include <atomic>
#include <barrier>
#include <cmath>
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

struct uint4 {
  unsigned x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 gridDim, blockDim;
// CUDA's vector types that the kernels here use (split_k.cuh's sums).
struct alignas(16) float4 { float x, y, z, w; };
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
struct alignas(8) uint2 { unsigned x, y; };

typedef int cudaError_t;
typedef void* cudaStream_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorInvalidConfiguration = 9,
       cudaErrorNotSupported = 801, cudaErrorUnknown = 999 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
// The labs' builds (bench/grading/cuda_lab.py) define CVT_EMULATED: a launch that
// a GPU refuses (a grid of 0 blocks, more than 1024 threads a block) then leaves the GPU's
// error for cudaGetLastError and runs nothing, as on a GPU; elsewhere it aborts.
inline cudaError_t cvt_emu_last_error = cudaSuccess;
inline cudaError_t cudaGetLastError() {
  const cudaError_t e = cvt_emu_last_error;
  cvt_emu_last_error = cudaSuccess;
  return e;
}
// Host code's memory calls: device memory is host memory here.
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1,
                      cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3,
                      cudaMemcpyDefault = 4 };
inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind) {
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* dst, int value, size_t bytes) {
  std::memset(dst, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  *ptr = std::malloc(bytes > 0 ? bytes : 1);
  return *ptr ? cudaSuccess : cudaErrorUnknown;
}
inline cudaError_t cudaFree(void* ptr) {
  std::free(ptr);
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

inline const char* cudaGetErrorString(cudaError_t e) {
  return e == cudaSuccess ? "no error"
         : e == cudaErrorInvalidConfiguration ? "invalid configuration argument"
         : e == cudaErrorInvalidValue ? "invalid argument" : "unknown error";
}
template <class F>
cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int) { return cudaSuccess; }

// The device the emulator plays: an H100's SM count and compute capability 9.0, so that a
// launcher takes the paths it takes there (v8's split K across a cluster included).
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrComputeCapabilityMajor = 75 };
inline cudaError_t cudaGetDevice(int* device) { *device = 0; return cudaSuccess; }
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
  *value = attr == cudaDevAttrMultiProcessorCount ? 132 : 9;
  return cudaSuccess;
}

// Cluster launches (cudaLaunchKernelEx with a cluster dimension): the blocks of a cluster
// run at the same time, each with shared memory of its own, and meet at a cluster barrier.
enum cudaLaunchAttributeID { cudaLaunchAttributeClusterDimension = 4 };
struct cudaLaunchAttribute {
  cudaLaunchAttributeID id;
  struct { struct { unsigned x, y, z; } clusterDim; } val;
};
struct cudaLaunchConfig_t {
  dim3 gridDim, blockDim;
  size_t dynamicSmemBytes = 0;
  cudaStream_t stream = nullptr;
  cudaLaunchAttribute* attrs = nullptr;
  unsigned numAttrs = 0;
};
template <class F>
cudaError_t cudaOccupancyMaxActiveClusters(int* clusters, F, const cudaLaunchConfig_t*) {
  *clusters = 1;
  return cudaSuccess;
}
template <class F>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, F, int, size_t) {
  *blocks = 1;
  return cudaSuccess;
}

// Stream-ordered pools (cuda/workspace.cuh): host memory here, filled with NaN so that a
// read of a value nobody wrote shows; freed at cudaFreeAsync.
enum cudaMemAllocationType { cudaMemAllocationTypePinned = 1 };
enum cudaMemLocationType { cudaMemLocationTypeDevice = 1 };
enum cudaMemPoolAttr { cudaMemPoolAttrReleaseThreshold = 4 };
enum { cudaErrorInvalidDevice = 101 };
struct cudaMemPoolProps {
  cudaMemAllocationType allocType;
  struct { cudaMemLocationType type; int id; } location;
};
typedef struct cvt_emu_pool* cudaMemPool_t;
inline cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps*) {
  static int one;
  *pool = reinterpret_cast<cudaMemPool_t>(&one);
  return cudaSuccess;
}
inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) {
  return cudaSuccess;
}
inline cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t bytes, cudaMemPool_t,
                                           cudaStream_t) {
  float* p = static_cast<float*>(std::malloc(bytes > 0 ? bytes : 1));
  if (p == nullptr) return cudaErrorUnknown;
  for (size_t i = 0; i < bytes / sizeof(float); ++i) p[i] = NAN;
  *ptr = p;
  return cudaSuccess;
}
inline cudaError_t cudaFreeAsync(void* ptr, cudaStream_t) {
  std::free(ptr);
  return cudaSuccess;
}

// CUDA's grid limits, which every launch here must keep as on a GPU (else the emulator
// aborts): 2^31 - 1 blocks along x, CVT_MAX_GRID_YZ along y and z. That is CUDA's 65535
// unless a test lowers it for the kernels too (common.cuh), so that small shapes need
// grids whose rows are folded into (y, z) (tests/cpu/test_ffma_rungs.py).
#ifndef CVT_MAX_GRID_YZ
#define CVT_MAX_GRID_YZ 65535
#endif

namespace cvt_emu {
constexpr unsigned kMaxCluster = 8;
constexpr size_t kSmemFloats = 64 * 1024;  // 256 KB per block, more than any SM has
alignas(128) inline float dynamic_smem[kMaxCluster][kSmemFloats];
inline thread_local std::barrier<>* block_barrier = nullptr;
// What the 32 threads of a warp hand each other in a warp-wide instruction: a row address
// each (ldmatrix), their fragments (mma.sync), or a value (__shfl_xor_sync).
struct WarpExchange {
  std::barrier<> meet{32};
  const void* address[32];
  unsigned a[32][4], b[32][2];
  unsigned long long value[32];
};
inline thread_local WarpExchange* warp_exchange = nullptr;
inline thread_local std::barrier<>* cluster_barrier = nullptr;
inline thread_local unsigned cluster_rank = 0;
inline float* block_smem() { return dynamic_smem[cluster_rank]; }
inline std::atomic<long long> launches{0};   // kernels launched (the labs' grader reads it)

// Blocks run one cluster after another; the `cluster_z` blocks of a cluster (consecutive
// along z, as the kernels here group them) run at once.
template <class Kernel, class... Args>
void launch_clusters(dim3 grid, dim3 block, unsigned cluster_z, size_t smem_bytes,
                     Kernel kernel, Args... args) {
#ifdef CVT_EMULATED
  // as CUDA 13 answers: an empty grid is an invalid argument, a block too big an invalid
  // configuration
  if (grid.x < 1 || grid.y < 1 || grid.z < 1) {
    cvt_emu_last_error = cudaErrorInvalidValue;
    return;
  }
  if (grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535 ||
      block.x * block.y * block.z < 1 || block.x * block.y * block.z > 1024 || block.z > 64) {
    cvt_emu_last_error = cudaErrorInvalidConfiguration;
    return;
  }
#endif
  if (grid.x < 1 || grid.y < 1 || grid.z < 1 || grid.x > 2147483647u ||
      grid.y > CVT_MAX_GRID_YZ || grid.z > CVT_MAX_GRID_YZ) {
    std::fprintf(stderr, "emulator: a grid of %u x %u x %u blocks (at most 2^31 - 1 x %d x %d)\n",
                 grid.x, grid.y, grid.z, CVT_MAX_GRID_YZ, CVT_MAX_GRID_YZ);
    std::abort();
  }
  if (smem_bytes > sizeof(dynamic_smem[0]) || cluster_z < 1 || cluster_z > kMaxCluster ||
      grid.z % cluster_z != 0) {
    std::fprintf(stderr, "emulator: %zu bytes of dynamic shared memory, cluster of %u along z\n",
                 smem_bytes, cluster_z);
    std::abort();
  }
  gridDim = grid;
  blockDim = block;
  launches += 1;
  const unsigned n = block.x * block.y * block.z;
  for (unsigned bz0 = 0; bz0 < grid.z; bz0 += cluster_z)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        std::deque<std::barrier<>> barriers;
        std::deque<WarpExchange> warps;  // (n + 31) / 32 per block of the cluster
        for (unsigned r = 0; r < cluster_z; ++r) {
          std::memset(dynamic_smem[r], 0xFF, smem_bytes);  // NaN: a read of a stale value shows
          barriers.emplace_back(n);
          for (unsigned w = 0; w < (n + 31) / 32; ++w) warps.emplace_back();
        }
        std::barrier<> cluster(n * cluster_z);
        std::vector<std::thread> threads;
        for (unsigned r = 0; r < cluster_z; ++r)
          for (unsigned t = 0; t < n; ++t)
            threads.emplace_back([&, r, t] {
              blockIdx = dim3(bx, by, bz0 + r);
              threadIdx = dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
              block_barrier = &barriers[r];
              warp_exchange = &warps[r * ((n + 31) / 32) + t / 32];
              cluster_barrier = &cluster;
              cluster_rank = r;
              kernel(args...);
            });
        for (auto& th : threads) th.join();
      }
}

template <class Kernel, class... Args>
void launch(dim3 grid, dim3 block, size_t smem_bytes, Kernel kernel, Args... args) {
  launch_clusters(grid, block, 1, smem_bytes, kernel, args...);
}
}  // namespace cvt_emu

template <class Kernel, class... Args>
cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t* config, Kernel kernel, Args... args) {
  unsigned cluster_z = 1;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const auto& a = config->attrs[i];
    if (a.id != cudaLaunchAttributeClusterDimension) continue;
    if (a.val.clusterDim.x != 1 || a.val.clusterDim.y != 1) {
      std::fprintf(stderr, "emulator: clusters along z only\n");
      std::abort();
    }
    cluster_z = a.val.clusterDim.z;
  }
  cvt_emu::launch_clusters(config->gridDim, config->blockDim, cluster_z,
                           config->dynamicSmemBytes, kernel, args...);
  return cudaSuccess;
}

inline void __syncthreads() { cvt_emu::block_barrier->arrive_and_wait(); }
inline float __uint_as_float(unsigned x) {  // the bits of x read as a float
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}

// Every lane hands its value over and takes lane ^ lane_mask's (all 32 lanes must call it).
template <class T>
T __shfl_xor_sync(unsigned, T value, int lane_mask) {
  static_assert(sizeof(T) <= sizeof(unsigned long long), "a value of at most 8 bytes");
  cvt_emu::WarpExchange& w = *cvt_emu::warp_exchange;
  const unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
  std::memcpy(&w.value[lane], &value, sizeof(T));
  w.meet.arrive_and_wait();
  T out;
  std::memcpy(&out, &w.value[lane ^ static_cast<unsigned>(lane_mask)], sizeof(T));
  w.meet.arrive_and_wait();
  return out;
}

// What the labs' kernels may also use (bench/grading/cuda_lab.py builds them with
// CVT_EMULATED): the other shuffles, a warp barrier, atomics (atomic across the block's
// threads, which are std::threads here) and the device math and integer helpers. A warp
// shuffle needs all 32 lanes of a full warp, as every shuffle here does.
#ifdef CVT_EMULATED
#include <algorithm>
namespace cvt_emu {
template <class T, class Source>
T shuffle(T value, Source source) {
  static_assert(sizeof(T) <= sizeof(unsigned long long), "a value of at most 8 bytes");
  WarpExchange& w = *warp_exchange;
  const unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
  std::memcpy(&w.value[lane], &value, sizeof(T));
  w.meet.arrive_and_wait();
  T out;
  std::memcpy(&out, &w.value[source(lane) % 32], sizeof(T));
  w.meet.arrive_and_wait();
  return out;
}
}  // namespace cvt_emu
constexpr int warpSize = 32;
template <class T>
T __shfl_down_sync(unsigned, T v, unsigned delta, int = 32) {
  return cvt_emu::shuffle(v, [delta](unsigned l) { return l + delta < 32 ? l + delta : l; });
}
template <class T>
T __shfl_up_sync(unsigned, T v, unsigned delta, int = 32) {
  return cvt_emu::shuffle(v, [delta](unsigned l) { return l >= delta ? l - delta : l; });
}
template <class T>
T __shfl_sync(unsigned, T v, int src, int = 32) {
  return cvt_emu::shuffle(v, [src](unsigned) { return static_cast<unsigned>(src); });
}
inline void __syncwarp(unsigned = 0xffffffffu) { cvt_emu::warp_exchange->meet.arrive_and_wait(); }
template <class T>
T atomicAdd(T* address, T value) {
  return std::atomic_ref<T>(*address).fetch_add(value);
}
inline int atomicMax(int* address, int value) {
  std::atomic_ref<int> a(*address);
  int old = a.load();
  while (old < value && !a.compare_exchange_weak(old, value)) {
  }
  return old;
}
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
template <class T>
T __ldg(const T* p) { return *p; }
using std::max;
using std::min;
#endif
