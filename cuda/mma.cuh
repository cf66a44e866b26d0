// Tensor-core building blocks of the warp-level (mma.sync) rungs: 16-byte cp.async copies,
// ldmatrix, the m16n8k16 mma, and packing two float32 results into one 32-bit register of
// fp16 or bf16. PTX ISA: "cp.async", "ldmatrix", "mma.sync.aligned.m16n8k16", all sm_80+.
//
// A warp multiplies a 16 x 16 tile of A by a 16 x 8 tile of B in one mma instruction. Each
// operand is spread over the warp's 32 lanes in fixed fragments of 32-bit registers (two
// 16-bit values each), so a lane never sees a whole row or column:
//
//   g = lane / 4, q = lane % 4
//   A (16 x 16, four registers)  a[0]: row g,     k 2q, 2q+1     a[1]: row g + 8, k 2q, 2q+1
//                                a[2]: row g,     k 2q+8, 2q+9   a[3]: row g + 8, k 2q+8, 2q+9
//   B (16 x 8, two registers)    b[0]: k 2q, 2q+1 of column g    b[1]: k 2q+8, 2q+9 of column g
//   C, D (16 x 8, four floats)   d[0], d[1]: row g, columns 2q, 2q+1
//                                d[2], d[3]: row g + 8, columns 2q, 2q+1
//
// ldmatrix builds those fragments from shared memory in one instruction: each of four 8 x 8
// matrices (8 rows of 16 bytes) is named by the row addresses of eight lanes (lanes 0-7
// matrix 0, 8-15 matrix 1, ...), and lane l receives row l / 4, elements 2(l % 4) and
// 2(l % 4) + 1 of each matrix, or with .trans the same of the transposed matrix.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <type_traits>

#include "common.cuh"

namespace cvt {

// True when the current device runs mma.sync on fp16 and bf16 (compute capability 8.0+):
// a launcher of these rungs asks before launching and returns cudaErrorNotSupported if not.
inline bool device_has_sm80() {
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess)
    return false;
  return major >= 8;
}

// Copies 16 bytes from global `src` to shared `dst`, both 16-byte aligned, through L2 only
// (.cg: the block reads the tile from shared memory, never again from L1).
__device__ __forceinline__ void cp_async_16(void* dst, const void* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
#else
  __trap();  // the launchers refuse GPUs below sm_80 before any launch
#endif
}

// Shared-memory address (the .shared window) of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Four 8 x 8 matrices of 16-bit values: r[i] is matrix i's fragment (see above).
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(address));
#else
  __trap();
#endif
}

// The same, each matrix transposed on the way: rows stored along k come out as columns.
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(address));
#else
  __trap();
#endif
}

// d += a b for a 16 x 16 tile of A and a 16 x 8 tile of B of type T (__half or
// __nv_bfloat16), accumulated in float32 by the tensor cores.
template <class T>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4],
                                             unsigned b0, unsigned b1) {
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>,
                "mma_m16n8k16: T is __half or __nv_bfloat16");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
#else
  __trap();
#endif
}

// float32 -> T, rounded to nearest even (what torch.matmul's output rounding does).
template <class T>
__device__ __forceinline__ T round_to(float x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(x);
  else return __float2half_rn(x);
}

// Two float32 -> two T in one 32-bit register, `lo` at the lower address.
template <class T>
__device__ __forceinline__ unsigned pack_pair(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&v);
  }
}

}  // namespace cvt
