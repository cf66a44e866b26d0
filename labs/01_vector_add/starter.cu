// Lab 1 in CUDA: vector add. out = x + y, element by element, for any length n.
//
// Fill in the TODOs, then grade it (on a GPU it runs there; without one, on the CPU
// emulator, which also counts every element your kernel loads and stores):
//
//     cvt-bench grade 1 starter.cu
//
// The grader allocates `out` and calls vector_add() with the tensors' memory (x, y and
// out hold n floats each, on the GPU). Read first: the lecture notes' Figure 5 (the same
// kernel in Triton), and, in this suite, cuda/vector_add.cu (16-byte vectors; do not call it).
#include <cuda_runtime.h>

constexpr int BLOCK = 256;  // threads per block, one element each

__global__ void vector_add_kernel(const float* x, const float* y, float* out, long n) {
  long i = threadIdx.x;  // TODO 1: the element of this thread: block blockIdx.x's BLOCK
                         //         elements, as a long (i may pass 2^31)
  if (i < 0) {           // TODO 2: keep the last block inside the arrays
    out[i] = x[i];       // TODO 3: store the sum
  }
}

void vector_add(const float* x, const float* y, float* out, long n) {
  const long blocks = 1;  // TODO 4: one block per BLOCK elements (and no launch for n = 0:
                          //         a grid of 0 blocks is an error)
  vector_add_kernel<<<blocks, BLOCK>>>(x, y, out, n);
}
