// The timer's own GPU kernels: inputs, the end-of-call scan, the sampled-row reference.
//
// A call's inputs are drawn into T's private memory before its batch and written into S's slot
// only when the call's turn comes (gen_uniform, same seed, same values). The scan (snapshot_rows +
// count_nonfinite) runs right after S says DONE for that call and its completion is inside the
// bracket: an output value still being written then is NaN (poisoned) when read, and work that
// finishes before it is inside the bracket, so returning early gains nothing. The rows the
// reference checks are drawn from a seed S never sees, and copied inside the call's own turn, so no
// row can be fixed up afterwards (by a later call either) and S cannot know which rows count.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "protocol.cuh"

namespace fjt {

constexpr int kRefThreads = 128;  // 4 warps per sampled row
constexpr int kMaxD = 256;        // widest head dimension the reference rows handle

__host__ __device__ inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [-3, 3] like the suite's inputs, a function of (seed, index) only: drawn into T's
// private copy before the batch, and again into S's slot when the call's turn comes.
__global__ void gen_uniform(float* dst, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    uint64_t h = mix64(seed ^ mix64(i));
    float u = (float)(h >> 40) * (1.0f / 16777216.0f);  // 24 random bits in [0, 1)
    dst[i] = -3.0f + 6.0f * u;
  }
}

__host__ __device__ inline uint64_t sampled_row(uint64_t seed, uint32_t call, uint32_t k,
                                                uint64_t rows) {
  return mix64(seed ^ mix64(((uint64_t)call << 32) | k)) % rows;
}

struct CallPtrs {
  const float* p[kMaxCalls];
};

// snap[call][k][0..d) = out[row(call, k)][0..d), out being that call's output
__global__ void snapshot_rows(const float* out, float* snap, int R, int d, uint64_t rows,
                              uint64_t seed, uint32_t call) {
  uint32_t k = blockIdx.x;
  uint64_t row = sampled_row(seed, call, k, rows);
  const float* src = out + row * d;
  float* dst = snap + ((size_t)call * R + k) * d;
  for (int c = threadIdx.x; c < d; c += blockDim.x) dst[c] = src[c];
}

// *count += values of out that are NaN or infinite (the poison is NaN).
__global__ void count_nonfinite(const float* out, size_t n, unsigned long long* count) {
  unsigned long long bad = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    bad += !isfinite(out[i]);
  if (bad) atomicAdd(count, bad);
}

struct RefArgs {
  CallPtrs q, k, v;  // T's private inputs of each call
  const float* snap;  // the sampled rows as S wrote them
  float* err;         // [call][k]: max |snap - reference| over the row (inf for NaN)
  int R, N, d;
  uint64_t rows, seed;
};

__device__ inline double warp_sum(double x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

// softmax(q K^T / sqrt(d)) V for one row, accumulated in double; each warp takes every 4th key.
__global__ void __launch_bounds__(kRefThreads) reference_rows(RefArgs a) {
  __shared__ double acc_sh[kRefThreads / 32][kMaxD];
  __shared__ double red[kRefThreads / 32];
  uint32_t call = blockIdx.y, k = blockIdx.x;
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  uint64_t row = sampled_row(a.seed, call, k, a.rows);
  size_t b = row / a.N, nd = (size_t)a.N * a.d;
  const float* q = a.q.p[call] + b * nd + (row % a.N) * a.d;
  const float* K = a.k.p[call] + b * nd;
  const float* V = a.v.p[call] + b * nd;
  double scale = 1.0 / sqrt((double)a.d), m = -INFINITY;
  for (int j = warp; j < a.N; j += warps) {
    double s = 0;
    for (int c = lane; c < a.d; c += 32) s += (double)q[c] * K[(size_t)j * a.d + c];
    m = fmax(m, warp_sum(s) * scale);
  }
  if (lane == 0) red[warp] = m;
  __syncthreads();
  for (int w = 0; w < warps; ++w) m = fmax(m, red[w]);
  __syncthreads();
  double acc[kMaxD / 32] = {0}, l = 0;
  for (int j = warp; j < a.N; j += warps) {
    double s = 0;
    for (int c = lane; c < a.d; c += 32) s += (double)q[c] * K[(size_t)j * a.d + c];
    double p = exp(warp_sum(s) * scale - m);
    l += p;
    for (int t = 0; t * 32 + lane < a.d; ++t) acc[t] += p * V[(size_t)j * a.d + t * 32 + lane];
  }
  for (int t = 0; t * 32 + lane < a.d; ++t) acc_sh[warp][t * 32 + lane] = acc[t];
  if (lane == 0) red[warp] = l;
  __syncthreads();
  double total = 0;
  for (int w = 0; w < warps; ++w) total += red[w];
  const float* got = a.snap + ((size_t)call * a.R + k) * a.d;
  float worst = 0;
  for (int c = threadIdx.x; c < a.d; c += blockDim.x) {
    double o = 0;
    for (int w = 0; w < warps; ++w) o += acc_sh[w][c];
    double diff = fabs((double)got[c] - o / total);
    worst = fmaxf(worst, diff == diff ? (float)diff : INFINITY);
  }
  __syncthreads();
  __shared__ float worst_sh[kRefThreads];
  worst_sh[threadIdx.x] = worst;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int t = 1; t < blockDim.x; ++t) worst = fmaxf(worst, worst_sh[t]);
    a.err[(size_t)call * a.R + k] = worst;
  }
}

// *count += elements where a and b differ bit for bit (inputs S was not to write).
__global__ void count_changed(const float* a, const float* b, size_t n,
                              unsigned long long* count) {
  const unsigned* x = reinterpret_cast<const unsigned*>(a);
  const unsigned* y = reinterpret_cast<const unsigned*>(b);
  unsigned long long bad = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    bad += x[i] != y[i];
  if (bad) atomicAdd(count, bad);
}

// *max_bits = max |a - b| as float bits (non-negative floats order like their bits; NaN: inf).
__global__ void max_abs_diff(const float* a, const float* b, size_t n, unsigned* max_bits) {
  float worst = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    float d = fabsf(a[i] - b[i]);
    worst = fmaxf(worst, d == d ? d : INFINITY);
  }
  atomicMax(max_bits, __float_as_uint(worst));
}

}  // namespace fjt
