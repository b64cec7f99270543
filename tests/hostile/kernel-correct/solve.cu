// A correct cuda-kernel submission: solve() on device pointers, tiled FlashAttention in fp32
// (one thread per query row, K/V tiles in shared memory, online softmax in the log2 domain).
#include <cuda_runtime.h>

#include <cmath>

constexpr int BR = 64;  // query rows per block
constexpr int BC = 32;  // key/value rows per tile

template <int D>
__global__ void __launch_bounds__(BR) attention(const float* __restrict__ Qs,
                                                const float* __restrict__ Ks_,
                                                const float* __restrict__ Vs_,
                                                float* __restrict__ Os, int N, float scale) {
  const size_t nd = (size_t)N * D;
  const float* Q = Qs + blockIdx.y * nd;
  const float* K = Ks_ + blockIdx.y * nd;
  const float* V = Vs_ + blockIdx.y * nd;
  __shared__ float4 Kt[BC][D / 4];
  __shared__ float4 Vt[BC][D / 4];
  const int row = blockIdx.x * BR + threadIdx.x;
  const bool active = row < N;
  float q[D], o[D];
#pragma unroll
  for (int c = 0; c < D; ++c) {
    q[c] = active ? Q[(size_t)row * D + c] * scale : 0.0f;
    o[c] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  for (int kv0 = 0; kv0 < N; kv0 += BC) {
    __syncthreads();
    for (int i = threadIdx.x; i < BC * D / 4; i += BR) {
      const int r = i / (D / 4), c = i % (D / 4), kr = kv0 + r;
      const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
      Kt[r][c] = kr < N ? reinterpret_cast<const float4*>(K + (size_t)kr * D)[c] : zero;
      Vt[r][c] = kr < N ? reinterpret_cast<const float4*>(V + (size_t)kr * D)[c] : zero;
    }
    __syncthreads();
    const int valid = min(BC, N - kv0);
    float s[BC];
    float tile_max = -INFINITY;
#pragma unroll
    for (int j = 0; j < BC; ++j) {
      float acc = 0.0f;
#pragma unroll
      for (int c = 0; c < D / 4; ++c) {
        const float4 k = Kt[j][c];
        acc = fmaf(q[4 * c], k.x, acc);
        acc = fmaf(q[4 * c + 1], k.y, acc);
        acc = fmaf(q[4 * c + 2], k.z, acc);
        acc = fmaf(q[4 * c + 3], k.w, acc);
      }
      s[j] = j < valid ? acc : -INFINITY;
      tile_max = fmaxf(tile_max, s[j]);
    }
    const float m_new = fmaxf(m, tile_max);
    const float correction = exp2f(m - m_new);
    l *= correction;
#pragma unroll
    for (int c = 0; c < D; ++c) o[c] *= correction;
#pragma unroll
    for (int j = 0; j < BC; ++j) {
      const float p = exp2f(s[j] - m_new);
      l += p;
#pragma unroll
      for (int c = 0; c < D / 4; ++c) {
        const float4 v = Vt[j][c];
        o[4 * c] = fmaf(p, v.x, o[4 * c]);
        o[4 * c + 1] = fmaf(p, v.y, o[4 * c + 1]);
        o[4 * c + 2] = fmaf(p, v.z, o[4 * c + 2]);
        o[4 * c + 3] = fmaf(p, v.w, o[4 * c + 3]);
      }
    }
    m = m_new;
  }
  if (!active) return;
  const float inv = 1.0f / l;
  float* O = Os + blockIdx.y * nd + (size_t)row * D;
#pragma unroll
  for (int c = 0; c < D; ++c) O[c] = o[c] * inv;
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* O, int B, int N,
                      int d) {
  const float scale = 1.4426950408889634f / sqrtf((float)d);  // log2(e) / sqrt(d)
  dim3 grid((N + BR - 1) / BR, B);
  if (d == 32)
    attention<32><<<grid, BR>>>(Q, K, V, O, N, scale);
  else
    attention<64><<<grid, BR>>>(Q, K, V, O, N, scale);
}
