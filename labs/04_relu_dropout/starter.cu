// Lab 4 in CUDA: fused ReLU + dropout with the suite's reproducible Philox mask, float32.
// out = relu(x) / (1 - p) where the element is kept, 0 where it is dropped, in one kernel: x
// is read once and out written once (the unfused version, relu then dropout, moves the
// tensor three times). Element i is kept when its uniform u_i >= p, and u_i is word i % 4 of
// the Philox4x32-10 call on counter i / 4 under `seed`: one philox4x32_10() call makes
// those four words at once, so a thread owns the 4 elements of one counter. The grader
// checks the mask element by element against that stream, with a fresh seed every call.
//
// Fill in the TODOs, then grade it (on a GPU it runs there; without one, on the CPU
// emulator, which also counts every element your kernel loads and stores):
//
//     cvt-bench grade 4 starter.cu
//
// The grader allocates `out` (like x) and calls relu_dropout() with the tensors' memory (x
// and out hold n floats each, on the GPU), p and seed. Read first: the notebook "Meet
// Triton" (its dropout), the stream in cuda/philox.cuh, and, in this suite,
// cuda/relu_dropout.cu (the same kernel for any dtype, with 16-byte vectors; do not call
// it).
//
// Counted loads: index the kernel's parameters (x[i]) or keep `auto p = x + i`; a raw
// `const float* p = x + i` (or &x[i], a cast to float4*) escapes the count, and the
// traffic test then scores 0. Keep a loaded value in a `float`: `auto v = x[i]` is a
// reference to global memory, and each of its uses counts as a load.
#include <cuda_runtime.h>
#include <stdint.h>

constexpr int THREADS = 256;  // a thread per counter (4 elements): 1024 elements per block

// Philox4x32-10 (Salmon et al., SC 2011) as Triton's tl.randint4x computes it: the four
// 32-bit words of counter (c, 0, 0) under the key (seed mod 2^32, seed >> 32).
__device__ uint4 philox4x32_10(uint64_t seed, uint64_t c) {
  uint32_t c0 = static_cast<uint32_t>(c), c1 = static_cast<uint32_t>(c >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {  // two 32 x 32 -> 64-bit products a round
    const uint64_t b = uint64_t{0xCD9E8D57u} * c2, a = uint64_t{0xD2511F53u} * c0;
    const uint32_t hi_b = b >> 32, lo_b = b, hi_a = a >> 32, lo_a = a;
    c0 = hi_b ^ c1 ^ k0;
    c1 = lo_b;
    c2 = hi_a ^ c3 ^ k1;
    c3 = lo_a;
    k0 += 0x9E3779B9u;  // the key bumped between rounds
    k1 += 0xBB67AE85u;
  }
  return make_uint4(c0, c1, c2, c3);
}

// A word as a uniform in [0, 1], as Triton's uint_to_uniform_float (tl.rand4x) does.
__device__ float uniform(uint32_t bits) {
  int32_t v = static_cast<int32_t>(bits);
  v = v < 0 ? ~v : v;  // -v - 1 without overflow
  return static_cast<float>(v) * 4.6566127342e-10f;
}

__global__ void relu_dropout_kernel(const float* x, float* out, long n, float p, uint64_t seed) {
  const long c = static_cast<long>(blockIdx.x) * THREADS + threadIdx.x;  // elements 4c .. 4c + 3
  if (4 * c >= n) return;
  // TODO 1: the four words of counter c under `seed`: one philox4x32_10() call
  for (int w = 0; w < 4; ++w) {
    const long i = 4 * c + w;  // element 4c + w
    if (i < n) {
      const float v = x[i];
      // TODO 2: u, element 4c + w taking word w (uniform() of it)
      // TODO 3: out = relu(v) / (1 - p) where u >= p, else 0
      out[i] = v;
    }
  }
}

void relu_dropout(const float* x, float* out, long n, float p, long seed) {
  const long blocks = (n + 4 * THREADS - 1) / (4 * THREADS);
  if (blocks > 0) {
    relu_dropout_kernel<<<blocks, THREADS>>>(x, out, n, p, static_cast<uint64_t>(seed));
  }
}
