// A cuda-kernel submission whose shared tile of query rows was written for d = 32: with d = 64
// each row spills into the next one (a wrong answer) and the last row past the tile's end, which
// memcheck reports at the store's line (PLANTED).
#include <cuda_runtime.h>
#include <math.h>

#define ROWS 128
#define TILE_D 32

__global__ void naive(const float* Q, const float* K, const float* V, float* O, int N, int d) {
  __shared__ float qs[ROWS * TILE_D];
  int b = blockIdx.y, row = blockIdx.x * blockDim.x + threadIdx.x;
  const float* q = Q + ((size_t)b * N + row) * d;
  const float* k = K + (size_t)b * N * d;
  const float* v = V + (size_t)b * N * d;
  if (row < N)
    for (int c = 0; c < d; ++c) qs[threadIdx.x * TILE_D + c] = q[c];  // PLANTED
  __syncthreads();
  if (row >= N) return;
  float m = -INFINITY, l = 0.f, acc[64];
  for (int c = 0; c < d; ++c) acc[c] = 0.f;
  for (int j = 0; j < N; ++j) {
    float s = 0.f;
    for (int c = 0; c < d; ++c) s += qs[threadIdx.x * TILE_D + c] * k[(size_t)j * d + c];
    s /= sqrtf((float)d);
    float m2 = fmaxf(m, s), scale = expf(m - m2), p = expf(s - m2);
    l = l * scale + p;
    for (int c = 0; c < d; ++c) acc[c] = acc[c] * scale + p * v[(size_t)j * d + c];
    m = m2;
  }
  for (int c = 0; c < d; ++c) O[((size_t)b * N + row) * d + c] = acc[c] / l;
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* O, int B, int N,
                      int d) {
  naive<<<dim3((N + ROWS - 1) / ROWS, B), ROWS>>>(Q, K, V, O, N, d);
}
