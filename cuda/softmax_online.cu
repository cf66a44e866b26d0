// Softmax, online: rows of any length, streamed twice with an online maximum and sum.
//
//   idea      a row longer than shared memory cannot be kept on chip between the max, the
//             sum and the output. The multi-pass kernel of the notebook "Meet Triton" reads
//             it three times (max; sum of exp(x - max); output). The online form (Milakov
//             and Gimelshein, "Online normalizer calculation for softmax", 2018) folds the
//             first two into one pass: each thread keeps a running maximum m and a running
//             sum s of exp(x - m); when a new chunk raises the maximum to m', the sum so
//             far is rescaled, s <- s * exp(m - m') + sum_chunk exp(x - m'). At the end the
//             block folds its (m, s) pairs: M = max m, S = sum s * exp(m - M). The second
//             pass reads the row again and writes exp(x - M) / S.
//             The second pass walks the row BACKWARDS (stage 2 of "Meet Triton" does the
//             same): the chunks read last by pass 1 are the likeliest to still be in L2, so
//             they are read first. How a step of a row is held depends on its type:
//             - float32: 16 elements per thread as float32, 1024-thread blocks (64 registers
//               per thread), one or two per SM: with rows of 128 KiB, 132 to 264 rows in
//               flight are 17 to 34 MB, inside the 50 MB L2, so pass 2 costs L2 bandwidth,
//               not DRAM bandwidth (93.9% of copy at 4096 x 32768).
//             - 16-bit types ("packed"): a step is kept as loaded, 8 vectors of 16 bytes per
//               thread (64 float16 elements in 32 registers, two per register), 512-thread
//               blocks, two per SM: a 32768-element 16-bit row is one step, read once, and two
//               rows overlap per SM (96% of copy, against 64% when 16-bit steps were held as
//               float32: 16 elements per thread, a 32768 row read twice;
//               results/sweeps/h100/debts_table.txt). Each element's exp is computed twice in a
//               one-step row (sum, then output). The packed form loses in float32 (74% of
//               copy against 94%), which therefore keeps its float32 step.
//   change    from cuda/softmax_row_sram.cu: no shared-memory copy of the row, so no limit
//             on n; one pass more over the row, one exp more per element (the rescale is
//             once per chunk). -inf is handled where a naive version breaks: while every
//             element seen so far is -inf, the shift is 0 instead of m (exp(-inf - -inf)
//             would poison the sum with NaN before a finite element arrives). A row of
//             -inf only still ends as NaN (exp(x - M) with M = -inf), as torch.softmax.
//             Columns (dim != -1) as in the row-in-SRAM kernel: a 2-D block, TX neighbour
//             columns x TY threads each walking the column with stride `inner`.
//   traffic   model (what the threads ask for): reads 2N, writes N elements: 3 N sizeof(T)
//             bytes; compulsory 2 N sizeof(T). A row that fits in one step (U vectors per
//             thread of one block: 16384 float32 elements, 32768 16-bit ones; 4096 and 2048
//             on the scalar path) keeps its values in registers from pass 1 and is read once:
//             2 N sizeof(T) then (the traffic model's one_pass_n). The extra read is served by
//             L2 when the rows in flight fit there (ncu: dram__bytes_read.sum ~ N sizeof(T)
//             then), by DRAM otherwise.
//   precond.  contiguous input (the binding calls .contiguous()); any n >= 1 (64-bit
//             offsets); rows of -inf, NaN and +inf behave as in the row-in-SRAM kernel. Row
//             vector path when n * sizeof(T) and both pointers are multiples of 16 bytes, else
//             VEC = 1.
//   run       python -m bench check --kernels '*softmax_online' --shapes 8x100003,3x5x7:dim=1
//             python -m bench time --kernels '*softmax*' --shapes 4096x32768 --precision fp32
#include <cmath>

#include "memory_common.cuh"

namespace cvt {

// Launch parameters: memory_config.h.
constexpr int kOnlineThreads = CVT_ONLINE_THREADS;         // threads per row block, at most
constexpr int kOnlineColThreads = CVT_ONLINE_COL_THREADS;  // threads per column block
constexpr int kOnlineColUnroll = CVT_ONLINE_COL_UNROLL;    // column elements per thread in flight
static_assert(kOnlineThreads % 32 == 0, "block_allreduce folds whole warps");
static_assert(kOnlineColThreads >= CVT_SOFTMAX_COLUMNS_MAX &&
                  (kOnlineColThreads & (kOnlineColThreads - 1)) == 0,
              "column_allreduce needs TY = kOnlineColThreads / TX, a power of two, for every TX");

// Vectors per thread in flight in a row step: 16 elements (64 bytes of float32, 32 of
// 16-bit types; two 16-bit vectors more and the bfloat16 conversions spill at the 64
// registers a 1024-thread block allows), 4 elements on the scalar path.
template <int VEC>
constexpr int kOnlineUnroll = VEC >= 4 ? CVT_ONLINE_ELEMENTS / VEC : CVT_ONLINE_SCALAR_UNROLL;

// The running (m, s) absorbs a chunk whose maximum is chunk_max; returns the shift the
// chunk's exps must use (0 while everything seen is -inf).
__device__ __forceinline__ float online_rescale(float& m, float& s, float chunk_max) {
  const float m_new = fmaxf(m, chunk_max);
  const float shift = m_new == -INFINITY ? 0.0f : m_new;
  s *= __expf(m - shift);
  m = m_new;
  return shift;
}

// ---------------------------------------------------------------------------------------
// Rows of float32: one block per row; thread t owns vectors t, t + T, t + 2T, ...
// ---------------------------------------------------------------------------------------

template <typename T, int VEC>
__global__ void __launch_bounds__(kOnlineThreads)
softmax_row_online_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n) {
  __shared__ float scratch[33];
  constexpr int U = kOnlineUnroll<VEC>;
  const int64_t nvec = n / VEC;  // VEC > 1 only when n % VEC == 0
  const int64_t step = int64_t{blockDim.x} * U;
  const int64_t steps = ceil_div(nvec, step);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;

    // Pass 1: running max and sum, U vectors per step.
    float m = -INFINITY, s = 0.0f;
    float f[U][VEC];  // the step just read (a one-step row stays here for pass 2)
    for (int64_t t = 0; t < steps; ++t) {
      float chunk_max = -INFINITY;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t v = t * step + u * blockDim.x + threadIdx.x;
        if (v < nvec) {
          const Vec<T, VEC> a = load_vec<T, VEC>(xr + v * VEC);
#pragma unroll
          for (int j = 0; j < VEC; ++j) f[u][j] = to_float(a.v[j]);
        } else {
#pragma unroll
          for (int j = 0; j < VEC; ++j) f[u][j] = -INFINITY;
        }
#pragma unroll
        for (int j = 0; j < VEC; ++j) chunk_max = fmaxf(chunk_max, f[u][j]);
      }
      const float shift = online_rescale(m, s, chunk_max);
#pragma unroll
      for (int u = 0; u < U; ++u) {
#pragma unroll
        for (int j = 0; j < VEC; ++j) s += __expf(f[u][j] - shift);
      }
    }
    // Fold the block's (m, s) pairs.
    const float row_max = block_allreduce(m, MaxOp(), -INFINITY, scratch);
    const float shift = row_max == -INFINITY ? 0.0f : row_max;
    const float row_sum = block_allreduce(s * __expf(m - shift), SumOp(), 0.0f, scratch);
    const float inv = 1.0f / row_sum;

    // Pass 2. A row of one step is still in registers: it is read once, as by the row in SRAM.
    if (steps == 1) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t v = u * blockDim.x + threadIdx.x;
        if (v < nvec) {
          Vec<T, VEC> out;
#pragma unroll
          for (int j = 0; j < VEC; ++j) out.v[j] = from_float<T>(__expf(f[u][j] - row_max) * inv);
          store_vec<T, VEC>(yr + v * VEC, out);
        }
      }
      continue;
    }
    // Longer rows: read again, last step first, and write exp(x - max) / sum.
    for (int64_t t = steps - 1; t >= 0; --t) {
      Vec<T, VEC> a[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t v = t * step + u * blockDim.x + threadIdx.x;
        if (v < nvec) a[u] = load_vec<T, VEC>(xr + v * VEC);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t v = t * step + u * blockDim.x + threadIdx.x;
        if (v < nvec) {
          Vec<T, VEC> out;
#pragma unroll
          for (int j = 0; j < VEC; ++j) out.v[j] = from_float<T>(__expf(to_float(a[u].v[j]) - row_max) * inv);
          store_vec<T, VEC>(yr + v * VEC, out);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Rows of 16-bit types ("packed"): a step is kept as loaded, 8 vectors of 16 bytes per
// thread (64 float16 elements in 32 registers), blocks of 512 threads, two per SM: a
// 32768-element 16-bit row is one step, read once, and two rows overlap per SM. The float32
// kernel above holds 16 elements per thread (the 64-register budget of a 1024-thread block):
// 32 bytes of 16-bit data per thread, a 32768-element row in two steps, read twice.
// ---------------------------------------------------------------------------------------

constexpr int kOnlinePackedThreads = CVT_ONLINE_PACKED_THREADS;  // threads per block, at most
constexpr int kOnlinePackedBytes = CVT_ONLINE_PACKED_BYTES;      // bytes per thread per step

template <typename T, int VEC>
constexpr int kOnlinePackedUnroll = VEC > 1 ? kOnlinePackedBytes / 16 : CVT_ONLINE_SCALAR_UNROLL;

template <typename T, int VEC>
__global__ void __launch_bounds__(kOnlinePackedThreads, 2)
softmax_row_online_packed_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows,
                                 int64_t n) {
  __shared__ float scratch[33];
  constexpr int U = kOnlinePackedUnroll<T, VEC>;
  const int64_t nvec = n / VEC;  // VEC > 1 only when n % VEC == 0
  const int64_t step = int64_t{blockDim.x} * U;
  const int64_t steps = ceil_div(nvec, step);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;

    // Pass 1: running max and sum; the step's vectors stay as loaded.
    float m = -INFINITY, s = 0.0f;
    Vec<T, VEC> a[U];
    for (int64_t t = 0; t < steps; ++t) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t v = t * step + u * blockDim.x + threadIdx.x;
        if (v < nvec) a[u] = load_vec<T, VEC>(xr + v * VEC);
      }
      float chunk_max = -INFINITY;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t v = t * step + u * blockDim.x + threadIdx.x;
        if (v < nvec) chunk_max = fmaxf(chunk_max, vec_max(a[u]));
      }
      const float shift = online_rescale(m, s, chunk_max);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t v = t * step + u * blockDim.x + threadIdx.x;
        if (v < nvec) s += vec_sum_exp(a[u], shift);
      }
    }
    const float row_max = block_allreduce(m, MaxOp(), -INFINITY, scratch);
    const float shift = row_max == -INFINITY ? 0.0f : row_max;
    const float row_sum = block_allreduce(s * __expf(m - shift), SumOp(), 0.0f, scratch);
    const float inv = 1.0f / row_sum;

    // Pass 2: a one-step row is still in registers; longer rows are read again, last step first.
    for (int64_t t = steps - 1; t >= 0; --t) {
      if (steps > 1) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int64_t v = t * step + u * blockDim.x + threadIdx.x;
          if (v < nvec) a[u] = load_vec<T, VEC>(xr + v * VEC);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t v = t * step + u * blockDim.x + threadIdx.x;
        if (v < nvec) store_vec<T, VEC>(yr + v * VEC, vec_exp_scaled(a[u], row_max, inv));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Columns: block = TX columns x TY threads per column; thread (tx, ty) owns the column's
// elements ty, ty + TY, ... and reads kOnlineColUnroll of them per step.
// ---------------------------------------------------------------------------------------

template <typename T>
__global__ void __launch_bounds__(kOnlineColThreads)
softmax_cols_online_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t n,
                           int64_t inner, int64_t tiles_i) {
  __shared__ float red[kOnlineColThreads];
  const int tx = threadIdx.x, ty = threadIdx.y, TX = blockDim.x, TY = blockDim.y;
  const int64_t step = int64_t{TY} * kOnlineColUnroll;
  const int64_t steps = ceil_div(n, step);
  for (int64_t b = blockIdx.x; b < outer * tiles_i; b += gridDim.x) {
    const int64_t o = b / tiles_i;
    const int64_t i = (b % tiles_i) * TX + tx;  // neighbour threads: neighbour columns
    const bool column = i < inner;              // (no early return: every thread syncs)
    const T* xc = x + o * n * inner + i;
    T* yc = y + o * n * inner + i;

    float m = -INFINITY, s = 0.0f;
    for (int64_t t = 0; t < steps; ++t) {
      float f[kOnlineColUnroll];
      float chunk_max = -INFINITY;
#pragma unroll
      for (int u = 0; u < kOnlineColUnroll; ++u) {
        const int64_t k = t * step + u * TY + ty;
        f[u] = column && k < n ? to_float(xc[k * inner]) : -INFINITY;
        chunk_max = fmaxf(chunk_max, f[u]);
      }
      const float shift = online_rescale(m, s, chunk_max);
#pragma unroll
      for (int u = 0; u < kOnlineColUnroll; ++u) s += __expf(f[u] - shift);
    }
    const float col_max = column_allreduce(m, MaxOp(), red);
    const float shift = col_max == -INFINITY ? 0.0f : col_max;
    const float col_sum = column_allreduce(s * __expf(m - shift), SumOp(), red);
    const float inv = 1.0f / col_sum;

    if (!column) continue;  // after the last reduction: nothing left to synchronise
    for (int64_t t = steps - 1; t >= 0; --t) {
      float f[kOnlineColUnroll];
#pragma unroll
      for (int u = 0; u < kOnlineColUnroll; ++u) {
        const int64_t k = t * step + u * TY + ty;
        f[u] = k < n ? to_float(xc[k * inner]) : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < kOnlineColUnroll; ++u) {
        const int64_t k = t * step + u * TY + ty;
        if (k < n) store_one(yc + k * inner, from_float<T>(__expf(f[u] - col_max) * inv));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Launch
// ---------------------------------------------------------------------------------------

template <typename T, int VEC>
cudaError_t launch_rows(const T* x, T* y, int64_t rows, int64_t n, cudaStream_t stream) {
  const int64_t nvec = n / VEC;
  // One step of U vectors per thread covers short rows; long rows get 1024 threads.
  const int threads = static_cast<int>(std::min<int64_t>(
      kOnlineThreads, std::max<int64_t>(32, ceil_div(ceil_div(nvec, kOnlineUnroll<VEC>), 32) * 32)));
  softmax_row_online_kernel<T, VEC><<<std::min(rows, kMaxGridX), threads, 0, stream>>>(x, y, rows, n);
  return cudaGetLastError();
}

template <typename T, int VEC>
cudaError_t launch_rows_packed(const T* x, T* y, int64_t rows, int64_t n, cudaStream_t stream) {
  const int64_t nvec = n / VEC;
  // One step of U vectors per thread covers short rows; long rows get kOnlinePackedThreads.
  const int threads = static_cast<int>(std::min<int64_t>(
      kOnlinePackedThreads,
      std::max<int64_t>(32, ceil_div(ceil_div(nvec, kOnlinePackedUnroll<T, VEC>), 32) * 32)));
  softmax_row_online_packed_kernel<T, VEC><<<std::min(rows, kMaxGridX), threads, 0, stream>>>(
      x, y, rows, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_cols(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, int sms,
                        cudaStream_t stream) {
  // Neighbour columns, at most 32; the grid fills the device's sms SMs.
  const int tx = column_tile(outer, inner, CVT_SOFTMAX_COLUMNS_MAX, sms);
  const int ty = kOnlineColThreads / tx;
  const int64_t tiles_i = ceil_div(inner, tx);
  softmax_cols_online_kernel<T><<<std::min(outer * tiles_i, kMaxGridX), dim3(tx, ty), 0, stream>>>(
      x, y, outer, n, inner, tiles_i);
  return cudaGetLastError();
}

cudaError_t launch_softmax_online(DType dtype, const void* x, void* y, int64_t outer, int64_t n,
                                  int64_t inner, int sms, cudaStream_t stream) {
  if (sms < 1) return cudaErrorInvalidValue;
  if (outer <= 0 || n <= 0 || inner <= 0) return cudaSuccess;
  return dispatch_dtype(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    const T* xt = static_cast<const T*>(x);
    T* yt = static_cast<T*>(y);
    if (inner > 1) return launch_cols<T>(xt, yt, outer, n, inner, sms, stream);
    const bool vec = aligned16(x) && aligned16(y) && (n * static_cast<int64_t>(sizeof(T))) % 16 == 0;
    if constexpr (sizeof(T) == 2) {  // 16-bit rows: steps kept packed (see the header)
      return vec ? launch_rows_packed<T, kVec16<T>>(xt, yt, outer, n, stream)
                 : launch_rows_packed<T, 1>(xt, yt, outer, n, stream);
    } else {
      return vec ? launch_rows<T, kVec16<T>>(xt, yt, outer, n, stream)
                 : launch_rows<T, 1>(xt, yt, outer, n, stream);
    }
  });
}

}  // namespace cvt
