// Random garbage of the right size (issue 22's corpus): WA, and no mistake may be named.
#include <cuda_runtime.h>

__global__ void garbage(float *O, size_t n) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = (unsigned)i * 2654435761u + 12345u;
  x ^= x >> 13;
  x *= 1664525u;
  O[i] = ((x >> 8) / 16777216.0f) * 6.0f - 3.0f;
}

extern "C" void solve(const float *Q, const float *K, const float *V, float *O, int B, int N,
                      int d) {
  const size_t n = (size_t)B * N * d;
  garbage<<<(unsigned)((n + 255) / 256), 256>>>(O, n);
}
