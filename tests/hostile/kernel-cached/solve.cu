// Cheats: computes the answer on the first call only, then copies that first answer into O on
// every later call (fast, and right for the same input). The harness's fresh input catches it: WA.
#include <cuda_runtime.h>

#include <cmath>

__global__ void naive(const float* Q, const float* K, const float* V, float* O, int N, int d) {
  const size_t nd = (size_t)N * d;
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= N) return;
  const float* q = Q + blockIdx.y * nd + (size_t)row * d;
  const float* k = K + blockIdx.y * nd;
  const float* v = V + blockIdx.y * nd;
  float* o = O + blockIdx.y * nd + (size_t)row * d;
  float m = -INFINITY, l = 0.0f;
  for (int c = 0; c < d; ++c) o[c] = 0.0f;
  for (int j = 0; j < N; ++j) {
    float s = 0.0f;
    for (int c = 0; c < d; ++c) s += q[c] * k[(size_t)j * d + c];
    s /= sqrtf((float)d);
    const float m_new = fmaxf(m, s), corr = expf(m - m_new), p = expf(s - m_new);
    l = l * corr + p;
    for (int c = 0; c < d; ++c) o[c] = o[c] * corr + p * v[(size_t)j * d + c];
    m = m_new;
  }
  for (int c = 0; c < d; ++c) o[c] /= l;
}

static float* cached = nullptr;

extern "C" void solve(const float* Q, const float* K, const float* V, float* O, int B, int N,
                      int d) {
  const size_t bytes = (size_t)B * N * d * sizeof(float);
  if (cached != nullptr) {
    cudaMemcpy(O, cached, bytes, cudaMemcpyDeviceToDevice);
    return;
  }
  dim3 grid((N + 127) / 128, B);
  naive<<<grid, 128>>>(Q, K, V, O, N, d);
  cudaMalloc(&cached, bytes);
  cudaMemcpy(cached, O, bytes, cudaMemcpyDeviceToDevice);
}
