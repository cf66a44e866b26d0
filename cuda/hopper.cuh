// Hopper building blocks of the warpgroup rungs (t2 to t5): mbarriers, TMA copies between a
// 2-D tensor in global memory and a swizzled tile in shared memory, the wgmma matrix
// descriptor and instructions, clusters, and the host side of TMA (the tensor map).
// PTX ISA: "mbarrier", "cp.async.bulk.tensor", "wgmma", "Matrix Descriptor Format",
// "setmaxnreg", "mapa"; all need sm_90a (the arch-specific target) except mbarrier.
//
// What a rung does with them, in one paragraph:
//   - a tensor map (built on the host, passed as a __grid_constant__ kernel argument)
//     describes a row-major matrix: its sizes, its row stride, the box one copy moves
//     (64 columns of 16-bit values = 128 bytes wide, some number of rows) and the swizzle
//     the box gets in shared memory (128-byte: 16-byte piece p of row r is stored at piece
//     p ^ (r % 8), conflict-free for every reader below);
//   - ONE thread issues a copy of a whole box; the copy fills zeros outside the matrix and,
//     when its bytes have landed, lowers the transaction count of an mbarrier in shared
//     memory; the barrier's phase completes when its expected arrivals AND bytes are in;
//     waiters spin on the phase's parity (0, 1, 0, ...);
//   - a warpgroup (4 consecutive warps, 128 threads) issues wgmma: a 64 x N x 16 product
//     whose A and B the tensor core reads from shared memory through two 64-bit
//     descriptors (start address, two strides, swizzle), accumulating into registers that
//     the warpgroup's threads hold in mma.sync's fragment layout (see wgmma_m64nNk16).
//     wgmma is asynchronous: commit_group closes a group, wait_group<n> waits until at most
//     n groups are still running (and so still reading their shared memory).
#pragma once
#include <cuda.h>  // CUtensorMap and its enums; the encoder itself is fetched at run time
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <mutex>
#include <type_traits>

#include "cluster.cuh"  // cluster_rank, cluster_sync
#include "common.cuh"
#include "launchers.h"  // TensorCoreType, t1's launcher (the TMA rungs' other path)
#include "mma.cuh"      // smem_address, pack_pair
#include "workspace.cuh"  // workspace_alloc

// Device code with Hopper's arch-specific instructions: compiled for sm_90a (nvcc
// -arch=sm_90a, TORCH_CUDA_ARCH_LIST=9.0a). Every other target compiles the same kernels
// without a body, and hopper_body_built() tells the launcher so before it launches.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CVT_HOPPER_DEVICE 1
#endif

namespace cvt {

// ---------------------------------------------------------------- mbarriers

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, unsigned arrivals) {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)),
               "r"(arrivals));
#endif
}

// Makes the initialised barriers visible to the async proxy (TMA) and to the cluster.
__device__ __forceinline__ void mbarrier_init_fence() {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

// One arrival on `bar` that also expects `bytes` more of copies in this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_bytes(uint64_t* bar, unsigned bytes) {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                   smem_address(bar)),
               "r"(bytes)
               : "memory");
#endif
}

// One arrival on `bar`.
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar))
               : "memory");
#endif
}

// One arrival on the barrier at the same place as `bar` in the shared memory of the
// cluster's block `rank` (which may be this block).
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, unsigned rank) {
#ifdef CVT_HOPPER_DEVICE
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(
          smem_address(bar)),
      "r"(rank)
      : "memory");
#endif
}

// Waits until the phase of parity `parity` of `bar` has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, unsigned parity) {
#ifdef CVT_HOPPER_DEVICE
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_address(bar)), "r"(parity)
        : "memory");
  } while (!done);
#endif
}

// ---------------------------------------------------------------- TMA

// The box of `map` whose first column is x and first row is y, into shared `dst`; its
// bytes count against `bar`. Zeros where the box leaves the matrix.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar,
                                            int x, int y) {
#ifdef CVT_HOPPER_DEVICE
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(smem_address(dst)),
      "l"(map), "r"(smem_address(bar)), "r"(x), "r"(y)
      : "memory");
#endif
}

// The same box, written to `dst` in every block of the cluster named in `blocks` (bit i:
// rank i), each signalling its own barrier at the place of `bar`.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map,
                                                      uint64_t* bar, int x, int y,
                                                      uint16_t blocks) {
#ifdef CVT_HOPPER_DEVICE
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(smem_address(dst)),
      "l"(map), "r"(smem_address(bar)), "r"(x), "r"(y), "h"(blocks)
      : "memory");
#endif
}

// Shared `src` into the box of `map` at (x, y); what falls outside the matrix is not
// written. Completes in bulk groups: tma_store_commit, then tma_store_wait_read.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int x,
                                             int y) {
#ifdef CVT_HOPPER_DEVICE
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          map),
      "r"(smem_address(src)), "r"(x), "r"(y)
      : "memory");
#endif
}
__device__ __forceinline__ void tma_store_commit() {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most `kPending` committed store groups still read their shared memory
// (the rest may be rewritten).
template <int kPending>
__device__ __forceinline__ void tma_store_wait_read() {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
#endif
}
// Waits until every committed store group has written global memory.
__device__ __forceinline__ void tma_store_wait_all() {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}
// Ordinary stores to shared memory become visible to the async proxy (a TMA store).
__device__ __forceinline__ void fence_proxy_async_shared() {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// ---------------------------------------------------------------- wgmma

// A matrix descriptor (PTX ISA, "Matrix Descriptor Format") for a tile in the 128-byte
// swizzle: bits 0-13 start address >> 4, 16-29 leading byte offset >> 4, 32-45 stride
// byte offset >> 4, 62-63 the swizzle (1: 128-byte). The swizzle repeats every 8 rows of
// 128 bytes (1024 bytes), so tiles start 1024-byte aligned; a start address 32 bytes into a
// row (the next 16 values of k) is what the hardware expects for a K-major operand.
//   K-major (A: rows of k):  stride = 1024 (the next 8 rows); leading unused (16).
//   MN-major (B, rows of n): stride = 1024 (the next 8 k-rows); leading = the bytes to the
//                            next 64 columns of n (the next TMA box).
__device__ __forceinline__ uint64_t wgmma_descriptor(const void* smem, unsigned leading,
                                                     unsigned stride) {
  const uint64_t address = smem_address(smem);
  return ((address & 0x3FFFF) >> 4) | (uint64_t((leading >> 4) & 0x3FFF) << 16) |
         (uint64_t((stride >> 4) & 0x3FFF) << 32) | (uint64_t(1) << 62);
}

// Before the first wgmma, and after registers of the accumulator were touched otherwise.
__device__ __forceinline__ void wgmma_fence() {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
// Waits until at most `kPending` committed groups of this warpgroup are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
#endif
}

// d += A B for A 64 x 16 (K-major) and B 16 x N (MN-major: B row-major, transposed by the
// instruction, tnspB = 1), in float32. d is a warpgroup's 64 x N accumulator: warp w of
// the warpgroup holds rows 16 w .. 16 w + 15, and d[4 j .. 4 j + 3] of a thread are
// mma.sync's 16 x 8 accumulator fragment (cuda/mma.cuh) of columns 8 j .. 8 j + 7.
#define CVT_D8(i)                                                                     \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]),         \
      "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define CVT_D64(i) CVT_D8(i), CVT_D8(i + 8), CVT_D8(i + 16), CVT_D8(i + 24), CVT_D8(i + 32), \
                   CVT_D8(i + 40), CVT_D8(i + 48), CVT_D8(i + 56)
#define CVT_REGS_0_63                                                                   \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "              \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "    \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "     \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define CVT_REGS_64_127                                                                 \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "     \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "     \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "     \
  "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, " \
  "%124, %125, %126, %127"
#define CVT_WGMMA_SCALE "p, 1, 1, 0, 1;\n}\n"  // accumulate, A and B as they are, B transposed

template <int N, class T>
__device__ __forceinline__ void wgmma_m64nNk16(float (&d)[N / 2], uint64_t a, uint64_t b) {
  static_assert(N == 128 || N == 256, "the instruction shapes spelled out below");
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "16-bit T");
#ifdef CVT_HOPPER_DEVICE
#define CVT_TYPES(TYPE) ".f32." TYPE "." TYPE " "
  if constexpr (N == 128 && std::is_same_v<T, __nv_bfloat16>) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16" CVT_TYPES("bf16")
                 "{" CVT_REGS_0_63 "}, %64, %65, " CVT_WGMMA_SCALE
                 : CVT_D64(0) : "l"(a), "l"(b));
  } else if constexpr (N == 128) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16" CVT_TYPES("f16")
                 "{" CVT_REGS_0_63 "}, %64, %65, " CVT_WGMMA_SCALE
                 : CVT_D64(0) : "l"(a), "l"(b));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16" CVT_TYPES("bf16")
                 "{" CVT_REGS_0_63 ", " CVT_REGS_64_127 "}, %128, %129, " CVT_WGMMA_SCALE
                 : CVT_D64(0), CVT_D64(64) : "l"(a), "l"(b));
  } else {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16" CVT_TYPES("f16")
                 "{" CVT_REGS_0_63 ", " CVT_REGS_64_127 "}, %128, %129, " CVT_WGMMA_SCALE
                 : CVT_D64(0), CVT_D64(64) : "l"(a), "l"(b));
  }
#undef CVT_TYPES
#endif
}

// d += A B in tf32 for A 64 x 8 from REGISTERS and B 8 x 256 from shared memory, K-major
// (wgmma reads tf32 operands from shared memory only K-major: no transpose for 32-bit
// types). a[0..3] of thread (warp w, lane 4 g + q) of the warpgroup hold A's rows 16 w + g
// and 16 w + g + 8 at k = q and q + 4: a0 (g, q), a1 (g + 8, q), a2 (g, q + 4),
// a3 (g + 8, q + 4). The tensor core uses the top 19 bits of each float (truncation).
__device__ __forceinline__ void wgmma_m64n256k8_tf32_rs(float (&d)[128], const unsigned (&a)[4],
                                                        uint64_t b) {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
               "{" CVT_REGS_0_63 ", " CVT_REGS_64_127 "}, {%128, %129, %130, %131}, %132, "
               "p, 1, 1;\n}\n"
               : CVT_D64(0), CVT_D64(64)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
#endif
}
#undef CVT_WGMMA_SCALE
#undef CVT_REGS_64_127
#undef CVT_REGS_0_63
#undef CVT_D64
#undef CVT_D8

// ---------------------------------------------------------------- warpgroups, clusters

// Gives this warpgroup's registers back to the SM (producer) or takes more (consumers);
// the counts of all warpgroups must fit the block's share of the register file.
template <int kRegisters>
__device__ __forceinline__ void warpgroup_registers_decrease() {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
#endif
}
template <int kRegisters>
__device__ __forceinline__ void warpgroup_registers_increase() {
#ifdef CVT_HOPPER_DEVICE
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
#endif
}

// A barrier of `threads` threads (whole warps) under the hardware barrier `id` (1..15;
// __syncthreads is 0): one warpgroup can wait for its own four warps only.
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// The ring's barriers of a warp-specialized rung (t3, t4, t5): full[s] completes on the
// producer's arrival and its stage's bytes, empty[s] on `empty_arrivals` arrivals (one per
// consumer warp of every block of the cluster). Thread 0 initialises them, then the whole
// cluster meets, so no block signals a barrier of another before it exists.
template <int STAGES>
__device__ __forceinline__ void init_stage_barriers(uint64_t* full, uint64_t* empty,
                                                    unsigned empty_arrivals) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], empty_arrivals);
    }
    mbarrier_init_fence();
  }
  cluster_sync();
}

// A consumer warp's arrival on a stage's empty barrier `empty` in every block of its cluster
// of CLUSTER blocks: the stage is free again everywhere once every consumer warp has arrived.
template <int CLUSTER>
__device__ __forceinline__ void release_stage(uint64_t* empty) {
  if constexpr (CLUSTER == 1)
    mbarrier_arrive(empty);
  else
    for (int r = 0; r < CLUSTER; ++r) mbarrier_arrive_cluster(empty, r);
}

// A flag in global memory between the blocks of one grid (t5's partial tiles). The setter's
// block first passes a barrier after writing what the flag announces; then one thread makes
// those writes visible GPU-wide and sets the flag. A reader's one thread polls the flag with
// acquire semantics, then its block passes a barrier before reading. (The pattern of the
// PTX ISA's "Memory Consistency Model": fence.acq_rel.gpu + a release store, an acquire load.)
__device__ __forceinline__ void flag_set_release(unsigned* flag, unsigned value) {
  __threadfence();
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}
__device__ __forceinline__ void flag_wait_acquire(const unsigned* flag, unsigned value) {
  unsigned seen = 0;
  for (;;) {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(seen) : "l"(flag) : "memory");
    if (seen == value) break;
    __nanosleep(64);
  }
}

// The first 1024-byte boundary at or after `p` in shared memory (the 128-byte swizzle
// repeats every 1024 bytes; a launcher asks for 1024 bytes more than its tiles need).
__device__ __forceinline__ unsigned char* align_1024(unsigned char* p) {
  return p + ((1024 - smem_address(p) % 1024) % 1024);
}

// ---------------------------------------------------------------- host side

// cuTensorMapEncodeTiled, fetched from the driver once (no -lcuda at link time).
using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

inline EncodeTiled tensor_map_encoder() {
  static const EncodeTiled encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found;
#if CUDART_VERSION >= 12050  // the versioned query (the unversioned one is gone in CUDA 13)
    const cudaError_t err = cudaGetDriverEntryPointByVersion(
        "cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
#else
    const cudaError_t err =
        cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &found);
#endif
    if (err != cudaSuccess || found != cudaDriverEntryPointSuccess)
      return static_cast<EncodeTiled>(nullptr);
    return reinterpret_cast<EncodeTiled>(fn);
  }();
  return encode;
}

// A row-major rows x cols matrix of `bytes`-byte values of `type` at `base`, moved in boxes
// of box_rows rows x 128 bytes (the swizzle's width) with the 128-byte swizzle; zeros
// outside the matrix. False if the driver lacks the encoder or refuses the description (TMA
// needs `base` 16-byte aligned, the row stride, cols * bytes, a multiple of 16, and sizes
// from 1 to 2^32).
inline bool tensor_map_2d(CUtensorMap* map, CUtensorMapDataType type, int bytes,
                          const void* base, int64_t rows, int64_t cols, int box_rows) {
  const EncodeTiled encode = tensor_map_encoder();
  if (encode == nullptr || rows < 1 || cols < 1) return false;
  const cuuint64_t sizes[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t row_stride[1] = {static_cast<cuuint64_t>(cols) * bytes};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(128 / bytes),
                             static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t step[2] = {1, 1};
  return encode(map, type, 2, const_cast<void*>(base), sizes, row_stride, box, step,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;  // NONE: zeros
}

// ... of 16-bit values: boxes of box_rows x 64 columns (t2, t3, t5).
inline bool tensor_map_16bit(CUtensorMap* map, const void* base, int64_t rows, int64_t cols,
                             int box_rows, bool bf16) {
  const auto type = bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  return tensor_map_2d(map, type, 2, base, rows, cols, box_rows);
}

// ... of floats: boxes of box_rows x 32 columns (the tf32 rung).
inline bool tensor_map_f32(CUtensorMap* map, const void* base, int64_t rows, int64_t cols,
                           int box_rows) {
  return tensor_map_2d(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, base, rows, cols, box_rows);
}

// The inputs a TMA rung takes (t2 to t5; otherwise they run a fall-back kernel): A, B and
// C 16-byte aligned and every row stride, K or N values, a multiple of 16 bytes (`per_16`
// values: 8 of 2 bytes, 4 floats); K >= 1 (a tensor map has no empty dimension).
inline bool tma_path_ok(const void* A, const void* B, const void* C, int64_t N, int64_t K,
                        int per_16 = 8) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return aligned(A) && aligned(B) && aligned(C) && K % per_16 == 0 && N % per_16 == 0 && K >= 1;
}

// 1 in the sm_90a image of the translation unit that includes this header, 0 in any other.
#ifdef CVT_HOPPER_DEVICE
static __device__ int hopper_body = 1;
#else
static __device__ int hopper_body = 0;
#endif

// True when the current device is a Hopper GPU (9.0) and this translation unit's image for
// it is the sm_90a one, with the kernels' bodies (an arch list without 9.0a builds them
// empty). Asked once per device; a launcher returns cudaErrorNotSupported when false.
static bool hopper_body_built() {
  static int known[64] = {};  // per device: 0 not asked yet, 1 built, 2 not
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) return false;
  if (known[device] == 0) {
    int body = 0;
    const bool hopper =
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) ==
            cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) ==
            cudaSuccess &&
        major == 9 && minor == 0;
    if (hopper && cudaMemcpyFromSymbol(&body, hopper_body, sizeof body) != cudaSuccess) body = 0;
    known[device] = hopper && body == 1 ? 1 : 2;
  }
  return known[device] == 1;
}

// The launch configuration of `blocks` blocks of `threads` threads in clusters of
// `cluster` blocks along x, with `smem` bytes of dynamic shared memory each. `config`
// points at `attribute`, so the object is not copied.
struct ClusterLaunch {
  cudaLaunchAttribute attribute = {};
  cudaLaunchConfig_t config = {};
  ClusterLaunch(int cluster, int64_t blocks, int threads, int smem, cudaStream_t stream) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = cluster;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(static_cast<unsigned>(blocks));
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// How many clusters of `cluster` blocks of `kernel` (`threads` threads, `smem` bytes of
// dynamic shared memory each) the GPU holds at once: asked once per device and kernel; a
// cluster needs `cluster` free SMs of one GPC, so this can be fewer than SMs / cluster.
template <auto kernel>
static cudaError_t max_active_clusters(int cluster, int threads, int smem, int* clusters) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  static int fits[64] = {};
  int device = 0;
  if ((err = cudaGetDevice(&device)) != cudaSuccess) return err;
  if (device < 0 || device >= 64) return cudaErrorInvalidDevice;
  if (fits[device] == 0) {
    const ClusterLaunch probe(cluster, cluster * 1024, threads, smem, nullptr);
    if ((err = cudaOccupancyMaxActiveClusters(&fits[device], kernel, &probe.config)) !=
        cudaSuccess)
      return err;
    if (fits[device] < 1) return cudaErrorInvalidConfiguration;
  }
  *clusters = fits[device];
  return cudaSuccess;
}

// Launches `kernel` (t3, t4, t5) on a persistent grid of clusters of `cluster` blocks of
// `threads` with `smem` bytes of dynamic shared memory each: as many clusters as the GPU
// holds at once (max_active_clusters), and no more than there are `tiles`.
template <auto kernel, class... Args>
static cudaError_t launch_persistent_clusters(int cluster, int threads, int smem, int64_t tiles,
                                              cudaStream_t stream, Args... args) {
  int fits = 0;
  cudaError_t err = max_active_clusters<kernel>(cluster, threads, smem, &fits);
  if (err != cudaSuccess) return err;
  const int64_t clusters = tiles < fits ? tiles : fits;
  const ClusterLaunch launch(cluster, clusters * cluster, threads, smem, stream);
  err = cudaLaunchKernelEx(&launch.config, kernel, args...);
  return err != cudaSuccess ? err : cudaGetLastError();
}

// What a TMA rung's launcher does around its kernel (t2, t3): refuse a build or GPU without
// the sm_90a body, nothing for an empty C, zeros for K = 0, t1's kernel for inputs TMA
// cannot describe (see tma_path_ok), else the rung's kernel for the element type.
using TmaRungLaunch = cudaError_t (*)(const void* A, const void* B, void* C, int64_t M,
                                      int64_t N, int64_t K, cudaStream_t stream);
static cudaError_t launch_tma_rung(TmaRungLaunch bf16, TmaRungLaunch fp16, const void* A,
                                   const void* B, void* C, int64_t M, int64_t N, int64_t K,
                                   TensorCoreType type, cudaStream_t stream) {
  if (!hopper_body_built()) return cudaErrorNotSupported;
  if (M == 0 || N == 0) return cudaSuccess;
  if (K == 0) return cudaMemsetAsync(C, 0, M * N * 2, stream);  // zeros in fp16 and bf16
  if (!tma_path_ok(A, B, C, N, K)) return launch_matmul_t1_mma_sync(A, B, C, M, N, K, type, stream);
  return (type == TensorCoreType::kBFloat16 ? bf16 : fp16)(A, B, C, M, N, K, stream);
}

}  // namespace cvt
