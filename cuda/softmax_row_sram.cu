// Softmax, row in SRAM: the whole row kept on chip (shared memory), read once, written once.
//
//   idea      softmax(x)_k = exp(x_k - m) / sum_j exp(x_j - m) with m = max_j x_j: shifting
//             by the row maximum changes nothing mathematically and keeps every exp in
//             (0, 1], so nothing overflows (the "numerically stable softmax" of the
//             notebook "Meet Triton"). It takes three sweeps over the row (max, sum,
//             output); if the row stays on chip between them, DRAM sees it once. A block
//             owns a row.
//             Sweep 1 copies the row from DRAM into shared memory (up to kSoftmaxSramMaxN =
//             32768 elements) while each thread tracks the maximum of its elements; warp
//             shuffles and one shared-memory step fold the block's maxima (block_allreduce).
//             Sweep 2 sums exp(x - m); sweep 3 writes exp(x - m) * (1 / sum) to DRAM. Every
//             thread sweeps the same elements it loaded, so between the sweeps only the
//             reductions synchronise. How the row is kept depends on its type:
//             - float32 rows are staged as float32 (128 KiB for 32768 elements, one block
//               per SM) and sweep 2 replaces each element by its exp in place: 97.5% of the
//               copy bandwidth at 4096 x 32768 (results/sweeps/h100/debts_table.txt).
//             - 16-bit rows are kept in their own type (64 KiB for 32768 elements), so three
//               512-thread blocks share an SM (__launch_bounds__(512, 3)) and one block's
//               loads overlap another's arithmetic; sweep 2 only sums and sweep 3 computes
//               each exp again (two exps per element at 3 TB/s use about a third of the SFUs'
//               rate). Staged as float32 like the float32 rows, a 16-bit row left its SM
//               without loads while its one block reduced (67-77% of copy); kept packed it
//               reaches 96% (the same table). The packed form loses in float32 (70.6% against
//               97.5%), which therefore keeps its staged kernel.
//             The Triton twin (triton_impl/softmax.py) is the kernel of "Meet Triton" with
//             BLOCK = next_power_of_2(n): the row is one tensor value, which its compiler
//             keeps in registers. A CUDA block can hold 32768 floats in registers too (64
//             per thread of a 512-thread block), but the scalar and column variants then
//             spill (ptxas -v); shared memory takes any layout and leaves registers free.
//   change    (first reduction kernel) Two layouts of the same idea, for its `dim`:
//             - rows (dim = -1, inner == 1): element k of row r is x[r * n + k]; a warp
//               moves 32 neighbour 16-byte vectors, several of them in flight per thread
//               (kSramUnroll for float32, kSramPackedUnroll for 16-bit types).
//             - columns (any other dim of a contiguous [outer, n, inner] tensor; no
//               transpose, no copy): element k of column (o, i) is x[(o * n + k) * inner + i].
//               A 2-D block: threadIdx.x walks TX neighbour columns (each load instruction
//               touches TX * sizeof(T) contiguous bytes: 32 for TX = 8 float32, one sector;
//               column_tile picks TX so that the grid still fills the GPU),
//               threadIdx.y splits the n elements; the reductions fold over threadIdx.y in
//               shared memory (column_allreduce). Shared memory holds the n x TX tile, as
//               float32 whatever the type.
//   traffic   reads N, writes N elements (N = outer * n * inner): compulsory = model
//             = 2 N sizeof(T) bytes, one pass, whatever the layout. Shared memory: two
//             sweeps over the row after the copy (2 N sizeof(T) bytes read for rows,
//             2 N x 4 for columns).
//   precond.  contiguous input (the binding calls .contiguous()); n <= 32768 (the binding
//             raises with the row length otherwise: the online version takes any n); a row
//             of length 1 gives 1; a row of -inf gives NaN, as torch.softmax
//             (exp(-inf - -inf) = exp(NaN)); a NaN or a +inf makes its row NaN, as torch.
//             Row vector path when n * sizeof(T) and both pointers are multiples of 16 bytes
//             (then every row starts aligned; run-time check), else VEC = 1, the same code.
//             Row offsets are 64-bit (row * n); offsets inside a row are int (n <= 32768).
//   run       python -m bench check --kernels '*softmax_row_sram' --shapes 1000x1000,100x100:dim=0
//             python -m bench time --kernels '*softmax*' --shapes 4096x32768 --precision fp32
#include <cmath>

#include "memory_common.cuh"

namespace cvt {

// Launch parameters: memory_config.h.
constexpr int kSramThreads = CVT_SRAM_THREADS;  // threads per block, at most
static_assert(kSramThreads % 32 == 0, "block_allreduce folds whole warps");

// Shared-memory accesses of VEC floats (LDS.128 / STS.128 for VEC = 4; two for 8).
template <int VEC>
__device__ __forceinline__ Vec<float, VEC> sram_load(const float* p) {
  return *reinterpret_cast<const Vec<float, VEC>*>(p);
}
template <int VEC>
__device__ __forceinline__ void sram_store(float* p, const Vec<float, VEC>& v) {
  *reinterpret_cast<Vec<float, VEC>*>(p) = v;
}

// Vectors per thread in flight while loading a row: 64 elements (256 bytes of float32,
// 128 of 16-bit types), so that a 512-thread block of the longest rows issues all of its
// loads at once (the block then computes, and no load of its SM is in flight: the more
// bytes each load phase moves, the smaller that gap's share); 8 elements on the scalar path.
// Rows short enough for about 4 vectors per thread (launch_rows) get kSramUnrollShort: the
// registers of 16 vectors (106 per thread for float32) would cap an SM at 3 blocks of a
// 3000-element row, 18 warps; with 4 vectors it holds 10 (measured:
// docs/performance/memory_bound.md, "CUDA row softmax at 3000×3000").
template <int VEC>
constexpr int kSramUnroll = VEC >= 4 ? CVT_SRAM_ELEMENTS / VEC : CVT_SRAM_SCALAR_UNROLL;
constexpr int kSramUnrollShort = CVT_SRAM_UNROLL_SHORT;

// ---------------------------------------------------------------------------------------
// Rows of float32: one block per row (grid-stride over rows). Thread t owns vectors t,
// t + T, ...
// ---------------------------------------------------------------------------------------

template <typename T, int VEC, int U>
__global__ void __launch_bounds__(kSramThreads)
softmax_row_sram_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int n) {
  extern __shared__ __align__(32) float row_sram[];  // n floats: the row, then its exps
  __shared__ float scratch[33];
  const int nvec = n / VEC;  // VEC > 1 only when n % VEC == 0
  const int step = blockDim.x * U;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;

    // Sweep 1, DRAM -> SRAM: U loads in flight, then convert, store, track max.
    float m = -INFINITY;
    for (int base = threadIdx.x; base < nvec; base += step) {
      Vec<T, VEC> a[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = base + u * blockDim.x;
        if (v < nvec) a[u] = load_vec<T, VEC>(xr + v * VEC);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = base + u * blockDim.x;
        if (v < nvec) {
          Vec<float, VEC> f;
#pragma unroll
          for (int j = 0; j < VEC; ++j) {
            f.v[j] = to_float(a[u].v[j]);
            m = fmaxf(m, f.v[j]);
          }
          sram_store<VEC>(row_sram + v * VEC, f);
        }
      }
    }
    m = block_allreduce(m, MaxOp(), -INFINITY, scratch);

    // Sweep 2, in SRAM: exp(x - m) in place, and its sum.
    float s = 0.0f;
    for (int v = threadIdx.x; v < nvec; v += blockDim.x) {
      Vec<float, VEC> f = sram_load<VEC>(row_sram + v * VEC);
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        f.v[j] = __expf(f.v[j] - m);
        s += f.v[j];
      }
      sram_store<VEC>(row_sram + v * VEC, f);
    }
    s = block_allreduce(s, SumOp(), 0.0f, scratch);

    // Sweep 3, SRAM -> DRAM: scale and store.
    const float inv = 1.0f / s;
    for (int v = threadIdx.x; v < nvec; v += blockDim.x) {
      const Vec<float, VEC> f = sram_load<VEC>(row_sram + v * VEC);
      Vec<T, VEC> out;
#pragma unroll
      for (int j = 0; j < VEC; ++j) out.v[j] = from_float<T>(f.v[j] * inv);
      store_vec<T, VEC>(yr + v * VEC, out);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Rows of 16-bit types ("packed"): the row stays in shared memory in its own type (64 KiB
// for 32768 float16 elements, not 128), so three blocks share an SM and overlap each other's
// phases; sweep 2 only sums the exps and sweep 3 computes them again (one more exp per
// element). The float32 kernel above staged 16-bit rows as float32 too: one block per SM,
// which loads its row, then reduces and writes it with no load of its SM in flight.
// ---------------------------------------------------------------------------------------

constexpr int kSramPackedUnroll = CVT_SRAM_PACKED_UNROLL;          // 16-byte vectors in flight
constexpr int kSramPackedMinBlocks = CVT_SRAM_PACKED_MIN_BLOCKS;   // blocks per SM, at least

template <typename T, int VEC>
__global__ void __launch_bounds__(kSramThreads, kSramPackedMinBlocks)
softmax_row_sram_packed_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int n) {
  extern __shared__ __align__(16) unsigned char row_packed_raw[];  // n elements of T
  T* row_sram = reinterpret_cast<T*>(row_packed_raw);
  __shared__ float scratch[33];
  constexpr int U = kSramPackedUnroll;  // loads per thread in flight, vectors or scalars
  const int nvec = n / VEC;  // VEC > 1 only when n % VEC == 0
  const int step = blockDim.x * U;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;

    // Sweep 1, DRAM -> SRAM as loaded; track the maximum.
    float m = -INFINITY;
    for (int base = threadIdx.x; base < nvec; base += step) {
      Vec<T, VEC> a[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = base + u * blockDim.x;
        if (v < nvec) a[u] = load_vec<T, VEC>(xr + v * VEC);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = base + u * blockDim.x;
        if (v < nvec) {
          m = fmaxf(m, vec_max(a[u]));
          *reinterpret_cast<Vec<T, VEC>*>(row_sram + v * VEC) = a[u];
        }
      }
    }
    m = block_allreduce(m, MaxOp(), -INFINITY, scratch);

    // Sweep 2, in SRAM: the sum of exp(x - m) (nothing written back).
    float s = 0.0f;
    for (int v = threadIdx.x; v < nvec; v += blockDim.x) {
      s += vec_sum_exp(*reinterpret_cast<const Vec<T, VEC>*>(row_sram + v * VEC), m);
    }
    s = block_allreduce(s, SumOp(), 0.0f, scratch);

    // Sweep 3, SRAM -> DRAM: exp(x - m) again, scaled.
    const float inv = 1.0f / s;
    for (int v = threadIdx.x; v < nvec; v += blockDim.x) {
      const Vec<T, VEC> a = *reinterpret_cast<const Vec<T, VEC>*>(row_sram + v * VEC);
      store_vec<T, VEC>(yr + v * VEC, vec_exp_scaled(a, m, inv));
    }
    // (each thread sweeps the elements it loaded, as in the float32 kernel: no barrier
    // before the next row overwrites them)
  }
}

// ---------------------------------------------------------------------------------------
// Columns: block = TX columns x TY threads per column. Thread (tx, ty) owns the column's
// elements ty, ty + TY, ...; the tile is stored k-major: tile[k * TX + tx].
// ---------------------------------------------------------------------------------------

template <typename T>
__global__ void __launch_bounds__(kSramThreads)
softmax_cols_sram_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int n,
                         int64_t inner, int64_t tiles_i) {
  extern __shared__ __align__(16) float tile_sram[];  // n x blockDim.x floats
  __shared__ float red[kSramThreads];
  const int tx = threadIdx.x, ty = threadIdx.y, TX = blockDim.x, TY = blockDim.y;
  for (int64_t b = blockIdx.x; b < outer * tiles_i; b += gridDim.x) {
    const int64_t o = b / tiles_i;
    const int64_t i = (b % tiles_i) * TX + tx;  // neighbour threads: neighbour columns
    const bool column = i < inner;              // (no early return: every thread syncs)
    const T* xc = x + o * n * inner + i;
    T* yc = y + o * n * inner + i;

    float m = -INFINITY;
#pragma unroll 4
    for (int k = ty; k < n; k += TY) {
      const float f = column ? to_float(xc[k * inner]) : -INFINITY;
      tile_sram[k * TX + tx] = f;
      m = fmaxf(m, f);
    }
    m = column_allreduce(m, MaxOp(), red);

    float s = 0.0f;
#pragma unroll 4
    for (int k = ty; k < n; k += TY) {
      const float e = __expf(tile_sram[k * TX + tx] - m);
      tile_sram[k * TX + tx] = e;
      s += e;
    }
    s = column_allreduce(s, SumOp(), red);

    const float inv = 1.0f / s;
    if (column) {
#pragma unroll 4
      for (int k = ty; k < n; k += TY) store_one(yc + k * inner, from_float<T>(tile_sram[k * TX + tx] * inv));
    }
  }
}

// ---------------------------------------------------------------------------------------
// Launch
// ---------------------------------------------------------------------------------------

template <typename Kernel>
cudaError_t allow_shared(Kernel kernel, size_t bytes) {
  // More than 48 KiB of dynamic shared memory must be asked for, per kernel.
  return bytes > 48 * 1024
             ? cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes))
             : cudaSuccess;
}

// Threads per row of nvec vectors: about kSramUnrollShort = 4 vectors per thread, so short
// rows get a warp and long ones kSramThreads.
inline int row_threads(int64_t nvec) {
  return static_cast<int>(std::min<int64_t>(
      kSramThreads, std::max<int64_t>(32, ceil_div(ceil_div(nvec, kSramUnrollShort), 32) * 32)));
}

template <typename T, int VEC>
cudaError_t launch_rows(const T* x, T* y, int64_t rows, int n, cudaStream_t stream) {
  const int64_t nvec = n / VEC;
  const int threads = row_threads(nvec);
  const size_t smem = sizeof(float) * static_cast<size_t>(n);
  const auto kernel = nvec <= int64_t{kSramUnrollShort} * kSramThreads
                          ? softmax_row_sram_kernel<T, VEC, kSramUnrollShort>
                          : softmax_row_sram_kernel<T, VEC, kSramUnroll<VEC>>;
  const cudaError_t err = allow_shared(kernel, smem);
  if (err != cudaSuccess) return err;
  kernel<<<std::min(rows, kMaxGridX), threads, smem, stream>>>(x, y, rows, n);
  return cudaGetLastError();
}

template <typename T, int VEC>
cudaError_t launch_rows_packed(const T* x, T* y, int64_t rows, int n, cudaStream_t stream) {
  const int threads = row_threads(n / VEC);  // the float32 rows' block size
  const size_t smem = sizeof(T) * static_cast<size_t>(n);
  const auto kernel = softmax_row_sram_packed_kernel<T, VEC>;
  const cudaError_t err = allow_shared(kernel, smem);
  if (err != cudaSuccess) return err;
  kernel<<<std::min(rows, kMaxGridX), threads, smem, stream>>>(x, y, rows, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_cols(const T* x, T* y, int64_t outer, int n, int64_t inner, int sms,
                        cudaStream_t stream) {
  // TX neighbour columns (column_tile): at most 32, and the n x TX tile within 32768 floats
  // (128 KiB). TY threads per column: the rest of a 512-thread block, no more than n needs
  // (both powers of two, as column_allreduce requires).
  int max_tx = 1;
  while (max_tx < CVT_SOFTMAX_COLUMNS_MAX && int64_t{2 * max_tx} * n <= kSoftmaxSramMaxN) {
    max_tx *= 2;
  }
  const int tx = column_tile(outer, inner, max_tx, sms);
  int ty = 1;
  while (ty * tx * 2 <= kSramThreads && ty < n) ty *= 2;
  const int64_t tiles_i = ceil_div(inner, tx);
  const size_t smem = sizeof(float) * static_cast<size_t>(n) * tx;
  const cudaError_t err = allow_shared(softmax_cols_sram_kernel<T>, smem);
  if (err != cudaSuccess) return err;
  softmax_cols_sram_kernel<T><<<std::min(outer * tiles_i, kMaxGridX), dim3(tx, ty), smem, stream>>>(
      x, y, outer, n, inner, tiles_i);
  return cudaGetLastError();
}

cudaError_t launch_softmax_row_sram(DType dtype, const void* x, void* y, int64_t outer, int64_t n,
                                    int64_t inner, int sms, cudaStream_t stream) {
  if (n > kSoftmaxSramMaxN || sms < 1) return cudaErrorInvalidValue;
  if (outer <= 0 || n <= 0 || inner <= 0) return cudaSuccess;
  return dispatch_dtype(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    const T* xt = static_cast<const T*>(x);
    T* yt = static_cast<T*>(y);
    const int nn = static_cast<int>(n);
    if (inner > 1) return launch_cols<T>(xt, yt, outer, nn, inner, sms, stream);
    const bool vec = aligned16(x) && aligned16(y) && (n * sizeof(T)) % 16 == 0;
    if constexpr (sizeof(T) == 2) {  // 16-bit rows: kept packed (see the header)
      return vec ? launch_rows_packed<T, kVec16<T>>(xt, yt, outer, nn, stream)
                 : launch_rows_packed<T, 1>(xt, yt, outer, nn, stream);
    } else {
      return vec ? launch_rows<T, kVec16<T>>(xt, yt, outer, nn, stream)
                 : launch_rows<T, 1>(xt, yt, outer, nn, stream);
    }
  });
}

}  // namespace cvt
