// RGB -> grey: grey = round(0.2989 R + 0.5870 G + 0.1140 B) of a uint8 3 x H x W image.
//
//   idea      the 2-D example of "A Practitioner's Guide to Triton": the image is
//             three H x W planes (channels first, as torchvision reads it), the output one
//             H x W plane. A 2-D grid of 2-D blocks tiles the picture; each thread converts
//             kGreyPx = 16 neighbour pixels of one row (one 16-byte load per plane, one
//             16-byte store), a block of 32 x 8 threads covers 8 rows x 512 columns. Block
//             (bx, by) starts at row bx * 8 and column by * 512 (by = block_y(): blockIdx.y
//             unless more than 65535 column blocks are folded into (y, z), common.cuh); a
//             thread outside the picture does nothing: the Practitioner's Guide's two
//             masks, offs_0 < h and offs_1 < w, as two comparisons. The Triton twin
//             (triton_impl/rgb_to_grey.py) is the Practitioner's Guide's kernel with an
//             8 x 512 program tile, its grid (cdiv(h, 8), cdiv(w, 512)) and its masks.
//   change    (1-D kernels so far) two grid axes; the weights of ITU-R BT.601 luma; the
//             result rounded to the nearest grey level (v + 0.5, truncated: v >= 0), where
//             the store of the Practitioner's Guide truncates (white 255, 255, 255 gives
//             254).
//   traffic   reads 3 H W bytes, writes H W bytes: compulsory = model = 4 H W bytes.
//   precond.  uint8, 3 x H x W, contiguous (the binding calls .contiguous()); any H, W >= 0
//             up to CUDA's grid: H <= (2^31 - 1) x 8 (row blocks on gridDim.x), W <= 65535 x
//             65535 x 512 (column blocks on gridDim.y, folded into (y, z) past 65535); past
//             either the launcher returns cudaErrorInvalidConfiguration, for images no GPU
//             can hold. 16-byte path when W is a multiple of 16 and both
//             pointers are 16-byte aligned (then every row and plane starts aligned; run-time
//             check), else the same kernel with byte loads.
//   run       python -m bench check --kernels '*rgb_to_grey' --shapes 3x150x225,3x1066x1600
//             python -m bench.images grey.png     (the package's test image, before and after)
#include "memory_common.cuh"

namespace cvt {

// kGreyPx = 16 neighbour pixels per thread, kGreyBX = 32 threads along a row, kGreyBY = 8
// rows per block: memory_launchers.h (the bindings name them in their limit message), from
// memory_config.h.

__device__ __forceinline__ uint8_t grey_of(uint32_t r, uint32_t g, uint32_t b) {
  const float v = 0.2989f * static_cast<float>(r) + 0.5870f * static_cast<float>(g) +
                  0.1140f * static_cast<float>(b);
  return static_cast<uint8_t>(v + 0.5f);  // v in [0, 254.97]: no clamp needed
}

template <bool VECTOR>
__global__ void __launch_bounds__(kGreyBX * kGreyBY)
rgb_to_grey_kernel(const uint8_t* __restrict__ img, uint8_t* __restrict__ grey, int64_t h, int64_t w) {
  const int64_t row = int64_t{blockIdx.x} * kGreyBY + threadIdx.y;
  const int64_t col = (block_y() * kGreyBX + threadIdx.x) * kGreyPx;
  if (row >= h || col >= w) return;  // the 2-D mask
  const int64_t plane = h * w;
  const int64_t p = row * w + col;
  if (VECTOR) {  // w % 16 == 0: all 16 pixels are inside the row
    const Vec<uint8_t, kGreyPx> r = load_vec<uint8_t, kGreyPx>(img + p);
    const Vec<uint8_t, kGreyPx> g = load_vec<uint8_t, kGreyPx>(img + plane + p);
    const Vec<uint8_t, kGreyPx> b = load_vec<uint8_t, kGreyPx>(img + 2 * plane + p);
    Vec<uint8_t, kGreyPx> out;
#pragma unroll
    for (int j = 0; j < kGreyPx; ++j) out.v[j] = grey_of(r.v[j], g.v[j], b.v[j]);
    store_vec<uint8_t, kGreyPx>(grey + p, out);
  } else {
#pragma unroll
    for (int j = 0; j < kGreyPx; ++j) {
      if (col + j < w) store_one(grey + p + j, grey_of(img[p + j], img[plane + p + j], img[2 * plane + p + j]));
    }
  }
}

cudaError_t launch_rgb_to_grey(const uint8_t* img, uint8_t* grey, int64_t h, int64_t w,
                               cudaStream_t stream) {
  if (h <= 0 || w <= 0) return cudaSuccess;
  const int64_t gx = ceil_div(h, kGreyBY), gy = ceil_div(w, kGreyColumnsPerBlock);
  dim3 grid;
  if (!fold_grid(gx, gy, &grid)) return cudaErrorInvalidConfiguration;
  const dim3 block(kGreyBX, kGreyBY);
  if (w % kGreyPx == 0 && aligned16(img) && aligned16(grey)) {
    rgb_to_grey_kernel<true><<<grid, block, 0, stream>>>(img, grey, h, w);
  } else {
    rgb_to_grey_kernel<false><<<grid, block, 0, stream>>>(img, grey, h, w);
  }
  return cudaGetLastError();
}

}  // namespace cvt
