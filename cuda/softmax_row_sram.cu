// Softmax, version 1: the whole row held in registers ("SRAM"), read once, written once.
//
//   idea      softmax(x)_k = exp(x_k - m) / sum_j exp(x_j - m) with m = max_j x_j: shifting
//             by the row maximum changes nothing mathematically and keeps every exp in
//             (0, 1], so nothing overflows (the seed notebook's "numerically stable
//             softmax"). It needs three sweeps over the row (max, sum, output); if the row
//             stays on chip between them, DRAM sees it once. A block owns a row: each thread
//             keeps VEC x ITEMS elements in registers (64 at most, so a 512-thread block
//             holds rows up to kSoftmaxSramMaxN = 32768 elements, any dtype), the block
//             reduces max and sum with warp shuffles and one shared-memory step
//             (block_allreduce), and writes exp(x - m) * (1 / sum).
//             The Triton twin (triton_impl/softmax.py) is the seed's kernel with
//             BLOCK = next_power_of_2(n): one program per row, the row one tensor.
//   change    (first reduction kernel) Two layouts of the same idea, for the seed's `dim`:
//             - rows (dim = -1, inner == 1): element k of row r is x[r * n + k]; a warp
//               reads 32 consecutive 16-byte vectors.
//             - columns (any other dim of a contiguous [outer, n, inner] tensor, no
//               transpose, no copy): element k of column (o, i) is x[(o * n + k) * inner + i].
//               A 2-D block: threadIdx.x walks TX neighbour columns (so each load touches
//               TX * sizeof(T) contiguous bytes), threadIdx.y splits the column's n
//               elements; max and sum fold over threadIdx.y in shared memory
//               (column_allreduce). TX x TY <= 512 and TY x 64 >= n, so TX = 8 columns
//               (32 bytes of float32, one sector) for n <= 4096.
//   traffic   reads N, writes N elements (N = outer * n * inner): compulsory = model
//             = 2 N sizeof(T) bytes, one pass, whatever the layout.
//   precond.  contiguous input (the binding calls .contiguous()); n <= 32768 (the binding
//             raises with the row length otherwise: use the online version); rows of length
//             1 give 1; a row of -inf gives NaN, as torch.softmax (exp(-inf - -inf) is
//             NaN); a NaN or +inf in a row makes the row NaN, as torch.softmax.
//             Row vector path when n * sizeof(T) and both pointers are multiples of 16
//             bytes (every row then starts aligned; run-time check), else VEC = 1.
//   run       python -m bench check --kernels '*softmax_row_sram' --shapes 1000x1000,100x100:dim=0
//             python -m bench time --kernels '*softmax*' --shapes 4096x32768 --precision fp32
#include <cmath>

#include "memory_common.cuh"

namespace cvt {

constexpr int kSramMaxPerThread = 64;  // elements in registers per thread
constexpr int kSramMaxThreads = 512;    // 512 x 64: up to 128 registers per thread, no spills
static_assert(kSramMaxPerThread * kSramMaxThreads == kSoftmaxSramMaxN, "SRAM row limit");

// ---------------------------------------------------------------------------------------
// Rows: one block per row (grid-stride over rows), thread t holds vectors t, t + T, ...
// ---------------------------------------------------------------------------------------

template <typename T, int VEC, int ITEMS>
__global__ void __launch_bounds__(kSramMaxThreads)
softmax_row_sram_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int n) {
  static_assert(VEC * ITEMS <= kSramMaxPerThread, "too many elements per thread");
  __shared__ float scratch[33];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    float v[ITEMS][VEC];

    // Sweep 1 (from DRAM): load the row, track the maximum. Columns past n read as -inf,
    // which neither wins the max nor adds to the sum (exp(-inf) = 0).
    float m = -INFINITY;
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
      const int c = (it * blockDim.x + threadIdx.x) * VEC;  // VEC > 1 only if n % VEC == 0
      if (c < n) {
        const Vec<T, VEC> a = load_vec<T, VEC>(xr + c);
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[it][j] = to_float(a.v[j]);
      } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[it][j] = -INFINITY;
      }
#pragma unroll
      for (int j = 0; j < VEC; ++j) m = fmaxf(m, v[it][j]);
    }
    m = block_allreduce(m, MaxOp(), -INFINITY, scratch);

    // Sweep 2 (registers): exp(x - m), kept in place of x, and its sum.
    float s = 0.0f;
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        v[it][j] = __expf(v[it][j] - m);
        s += v[it][j];
      }
    }
    s = block_allreduce(s, SumOp(), 0.0f, scratch);

    // Sweep 3 (registers -> DRAM): scale and store.
    const float inv = 1.0f / s;
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
      const int c = (it * blockDim.x + threadIdx.x) * VEC;
      if (c < n) {
        Vec<T, VEC> out;
#pragma unroll
        for (int j = 0; j < VEC; ++j) out.v[j] = from_float<T>(v[it][j] * inv);
        store_vec<T, VEC>(yr + c, out);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Columns: block = TX columns x TY threads per column; thread (tx, ty) holds the column's
// elements ty, ty + TY, ... (ITEMS of them).
// ---------------------------------------------------------------------------------------

template <typename T, int ITEMS>
__global__ void __launch_bounds__(kSramMaxThreads)
softmax_cols_sram_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int n,
                         int64_t inner, int64_t tiles_i) {
  static_assert(ITEMS <= kSramMaxPerThread, "too many elements per thread");
  __shared__ float red[kSramMaxThreads];
  for (int64_t b = blockIdx.x; b < outer * tiles_i; b += gridDim.x) {
    const int64_t o = b / tiles_i;
    const int64_t i = (b % tiles_i) * blockDim.x + threadIdx.x;  // neighbour threads: neighbour columns
    const bool column = i < inner;                              // (no early return: every thread syncs)
    const T* xc = x + o * n * inner + i;
    T* yc = y + o * n * inner + i;
    float v[ITEMS];
    float m = -INFINITY;
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
      const int k = it * blockDim.y + threadIdx.y;
      v[it] = column && k < n ? to_float(xc[k * inner]) : -INFINITY;
      m = fmaxf(m, v[it]);
    }
    m = column_allreduce(m, MaxOp(), red);
    float s = 0.0f;
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
      v[it] = __expf(v[it] - m);
      s += v[it];
    }
    s = column_allreduce(s, SumOp(), red);
    const float inv = 1.0f / s;
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
      const int k = it * blockDim.y + threadIdx.y;
      if (column && k < n) yc[k * inner] = from_float<T>(v[it] * inv);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Launch: pick the smallest ITEMS that fits, instantiated for a few values only.
// ---------------------------------------------------------------------------------------

template <typename T, int VEC, int ITEMS>
void launch_rows(const T* x, T* y, int64_t rows, int n, cudaStream_t stream) {
  const int64_t nvec = ceil_div(n, VEC);
  const int threads = static_cast<int>(std::min<int64_t>(
      kSramMaxThreads, std::max<int64_t>(32, ceil_div(ceil_div(nvec, ITEMS), 32) * 32)));
  const int64_t blocks = std::min(rows, kMaxGridX);
  softmax_row_sram_kernel<T, VEC, ITEMS><<<blocks, threads, 0, stream>>>(x, y, rows, n);
}

template <typename T, int VEC>
cudaError_t launch_rows_vec(const T* x, T* y, int64_t rows, int n, cudaStream_t stream) {
  // Elements per thread VEC * ITEMS: the smallest of the instantiated ITEMS that covers
  // the row with at most kSramMaxThreads threads.
  const int64_t per_thread = ceil_div(ceil_div(n, VEC), kSramMaxThreads);  // vectors per thread, at least
  if (VEC == 1) {
    if (per_thread <= 4) launch_rows<T, 1, 4>(x, y, rows, n, stream);
    else if (per_thread <= 8) launch_rows<T, 1, 8>(x, y, rows, n, stream);
    else if (per_thread <= 16) launch_rows<T, 1, 16>(x, y, rows, n, stream);
    else if (per_thread <= 32) launch_rows<T, 1, 32>(x, y, rows, n, stream);
    else launch_rows<T, 1, 64>(x, y, rows, n, stream);
  } else {
    constexpr int kMaxItems = kSramMaxPerThread / VEC;  // 16 vectors of float, 8 of half
    if (per_thread <= 1) launch_rows<T, VEC, 1>(x, y, rows, n, stream);
    else if (per_thread <= 2) launch_rows<T, VEC, 2>(x, y, rows, n, stream);
    else if (per_thread <= 4) launch_rows<T, VEC, 4>(x, y, rows, n, stream);
    else if (per_thread <= 8) launch_rows<T, VEC, 8>(x, y, rows, n, stream);
    else launch_rows<T, VEC, kMaxItems>(x, y, rows, n, stream);
  }
  return cudaGetLastError();
}

template <typename T, int ITEMS>
void launch_cols(const T* x, T* y, int64_t outer, int n, int64_t inner, cudaStream_t stream) {
  int ty = 1;  // threads per column: a power of two with ty * 64 >= n (64 elements each at most)
  while (ty * kSramMaxPerThread < n) ty *= 2;
  int tx = 1;  // neighbour columns per block: up to 512 / ty threads, no more than inner needs
  while (tx * 2 * ty <= kSramMaxThreads && tx * 2 <= 256 && tx < inner) tx *= 2;
  const int64_t tiles_i = ceil_div(inner, tx);
  const int64_t blocks = std::min(outer * tiles_i, kMaxGridX);
  softmax_cols_sram_kernel<T, ITEMS><<<blocks, dim3(tx, ty), 0, stream>>>(x, y, outer, n, inner, tiles_i);
}

template <typename T>
cudaError_t launch_cols_items(const T* x, T* y, int64_t outer, int n, int64_t inner,
                              cudaStream_t stream) {
  int ty = 1;
  while (ty * kSramMaxPerThread < n) ty *= 2;
  const int64_t items = ceil_div(n, ty);
  if (items <= 1) launch_cols<T, 1>(x, y, outer, n, inner, stream);
  else if (items <= 4) launch_cols<T, 4>(x, y, outer, n, inner, stream);
  else if (items <= 8) launch_cols<T, 8>(x, y, outer, n, inner, stream);
  else if (items <= 16) launch_cols<T, 16>(x, y, outer, n, inner, stream);
  else if (items <= 32) launch_cols<T, 32>(x, y, outer, n, inner, stream);
  else launch_cols<T, 64>(x, y, outer, n, inner, stream);
  return cudaGetLastError();
}

cudaError_t launch_softmax_row_sram(DType dtype, const void* x, void* y, int64_t outer, int64_t n,
                                    int64_t inner, cudaStream_t stream) {
  if (n > kSoftmaxSramMaxN) return cudaErrorInvalidValue;
  if (outer <= 0 || n <= 0 || inner <= 0) return cudaSuccess;
  return dispatch_dtype(dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    const T* xt = static_cast<const T*>(x);
    T* yt = static_cast<T*>(y);
    const int nn = static_cast<int>(n);
    if (inner > 1) return launch_cols_items<T>(xt, yt, outer, nn, inner, stream);
    const int64_t rows = outer;
    if (aligned16(x) && aligned16(y) && (n * sizeof(T)) % 16 == 0) {
      return launch_rows_vec<T, kVec16<T>>(xt, yt, rows, nn, stream);
    }
    return launch_rows_vec<T, 1>(xt, yt, rows, nn, stream);
  });
}

}  // namespace cvt
