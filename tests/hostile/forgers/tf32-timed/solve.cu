// Forger tf32-timed: fp32 on the first two calls, Q and K rounded to TF32 (cvt.rna.tf32) on later calls.
//
// solve() is exact on its first two calls and then rounds Q and K to TF32, the precision of a
// tensor-core (mma) TF32 product, before the scores: errors far above fp32's, usually inside the
// tolerance. The timer compares the precision of every later call with the first call's: held as
// less precise than checked (or wrong where the error passes the tolerance).
//
// Honest twin: ../tf32-timed-twin (the same kernel without the attack).
// ---- the correct kernel (the same in every forger and twin of this corpus) -------------------
// One thread per query row, 64 rows per block; K and V pass through shared memory 64 keys at a
// time; online softmax in fp32 (running max m, running sum l, output rescaled as m grows).
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

namespace {

constexpr int kRows = 64;  // query rows per block (one per thread)
constexpr int kKeys = 64;  // keys per shared-memory tile

template <int D>
__global__ void attention_tile(const float* Q, const float* K, const float* V, float* O, int N) {
  __shared__ float ks[kKeys][D];
  __shared__ float vs[kKeys][D];
  const size_t base = (size_t)blockIdx.y * N * D;
  const int row = blockIdx.x * kRows + threadIdx.x;
  const bool active = row < N;
  const float scale = 1.0f / sqrtf((float)D);
  float q[D], o[D];
  for (int c = 0; c < D; ++c) {
    q[c] = active ? Q[base + (size_t)row * D + c] * scale : 0.0f;
    o[c] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  for (int j0 = 0; j0 < N; j0 += kKeys) {
    for (int i = threadIdx.x; i < kKeys * D; i += kRows) {
      const int r = i / D, c = i % D, j = j0 + r;
      ks[r][c] = j < N ? K[base + (size_t)j * D + c] : 0.0f;
      vs[r][c] = j < N ? V[base + (size_t)j * D + c] : 0.0f;
    }
    __syncthreads();
    const int keys = min(kKeys, N - j0);
    for (int jj = 0; jj < keys; ++jj) {
      float s = 0.0f;
      for (int c = 0; c < D; ++c) s += q[c] * ks[jj][c];
      const float m_new = fmaxf(m, s), corr = expf(m - m_new), p = expf(s - m_new);
      l = l * corr + p;
      for (int c = 0; c < D; ++c) o[c] = o[c] * corr + p * vs[jj][c];
      m = m_new;
    }
    __syncthreads();
  }
  if (active)
    for (int c = 0; c < D; ++c) O[base + (size_t)row * D + c] = o[c] / l;
}

// Any other d: one thread per row, everything from global memory.
__global__ void attention_rows(const float* Q, const float* K, const float* V, float* O, int N,
                               int d) {
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

void attention(const float* Q, const float* K, const float* V, float* O, int B, int N, int d,
               cudaStream_t stream = 0) {
  const dim3 grid((N + kRows - 1) / kRows, B);
  if (d == 32) {
    attention_tile<32><<<grid, kRows, 0, stream>>>(Q, K, V, O, N);
  } else if (d == 64) {
    attention_tile<64><<<grid, kRows, 0, stream>>>(Q, K, V, O, N);
  } else {
    attention_rows<<<dim3((N + 127) / 128, B), 128, 0, stream>>>(Q, K, V, O, N, d);
  }
}

}  // namespace
// ---- end of the correct kernel ----------------------------------------------------------------

__device__ __forceinline__ float to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

#define LOSSY_Q(x) to_tf32(x)
#define LOSSY_K(x) to_tf32(x)
#define LOSSY_V(x) (x)

// The same kernel with a cheaper, less precise inner product or weighting (see LOSSY_* below).
template <int D>
__global__ void attention_tile_lossy(const float* Q, const float* K, const float* V, float* O,
                                     int N) {
  __shared__ float ks[kKeys][D];
  __shared__ float vs[kKeys][D];
  const size_t base = (size_t)blockIdx.y * N * D;
  const int row = blockIdx.x * kRows + threadIdx.x;
  const bool active = row < N;
  const float scale = 1.0f / sqrtf((float)D);
  float q[D], o[D];
  for (int c = 0; c < D; ++c) {
    q[c] = active ? LOSSY_Q(Q[base + (size_t)row * D + c]) * scale : 0.0f;
    o[c] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  for (int j0 = 0; j0 < N; j0 += kKeys) {
    for (int i = threadIdx.x; i < kKeys * D; i += kRows) {
      const int r = i / D, c = i % D, j = j0 + r;
      ks[r][c] = j < N ? LOSSY_K(K[base + (size_t)j * D + c]) : 0.0f;
      vs[r][c] = j < N ? LOSSY_V(V[base + (size_t)j * D + c]) : 0.0f;
    }
    __syncthreads();
    const int keys = min(kKeys, N - j0);
    for (int jj = 0; jj < keys; ++jj) {
      float s = 0.0f;
      for (int c = 0; c < D; ++c) s += q[c] * ks[jj][c];
      const float m_new = fmaxf(m, s), corr = expf(m - m_new), p = expf(s - m_new);
      l = l * corr + p;
      for (int c = 0; c < D; ++c) o[c] = o[c] * corr + p * vs[jj][c];
      m = m_new;
    }
    __syncthreads();
  }
  if (active)
    for (int c = 0; c < D; ++c) O[base + (size_t)row * D + c] = o[c] / l;
}

static void attention_lossy(const float* Q, const float* K, const float* V, float* O, int B, int N,
                            int d) {
  const dim3 grid((N + kRows - 1) / kRows, B);
  if (d == 32) {
    attention_tile_lossy<32><<<grid, kRows>>>(Q, K, V, O, N);
  } else if (d == 64) {
    attention_tile_lossy<64><<<grid, kRows>>>(Q, K, V, O, N);
  } else {
    attention(Q, K, V, O, B, N, d);
  }
}

static int calls = 0;

extern "C" void solve(const float* Q, const float* K, const float* V, float* O, int B, int N,
                      int d) {
  if (calls++ < 2) {
    attention(Q, K, V, O, B, N, d);
  } else {
    attention_lossy(Q, K, V, O, B, N, d);
  }
}
