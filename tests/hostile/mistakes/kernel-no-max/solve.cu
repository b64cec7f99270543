/* A FlashAttention submission with one planted mistake (the mistake corpus): NO_MAX.
 * Written by make_corpus.py from attention_row.inc and main_kernel.inc. */
#include <math.h>
#include <stddef.h>
#define NO_MAX 1
/* One query row of FlashAttention (key tiles of BC, online softmax), as plain C or CUDA device
 * code, with at most one mistake switched on by a #define (the corpus of issue 22). */
#ifdef __CUDACC__
#include <cuda_fp16.h>
#define DEV __device__
#define ROUND_ACC(x) __half2float(__float2half(x))
#else
#define DEV
#define ROUND_ACC(x) ((float)(_Float16)(x))
#endif
#ifndef BC
#define BC 32 /* keys per tile */
#endif
#define BR 32 /* query rows per tile */

DEV static float score(const float *Q, const float *K, int i, int j, int N, int d) {
  float dot = 0.0f;
  for (int t = 0; t < d; ++t) {
#if defined(QK_SWAPPED)
    dot += K[(size_t)i * d + t] * Q[(size_t)j * d + t];
#elif defined(K_NOT_TRANSPOSED)
    dot += Q[(size_t)i * d + t] * K[(size_t)t * N + j];
#else
    dot += Q[(size_t)i * d + t] * K[(size_t)j * d + t];
#endif
  }
  return dot;
}

DEV static float the_scale(int d) {
#if defined(NO_SCALE)
  return 1.0f;
#elif defined(SCALE_INV_D)
  return 1.0f / d;
#elif defined(SCALE_SQRT_D)
  return sqrtf((float)d);
#elif defined(SCALE_ZERO)
  return 1 / d; /* integer division: 0 */
#else
  return 1.0f / sqrtf((float)d);
#endif
}

/* The key tiles' starts: the last partial tile dropped or visited twice by the mistakes. */
DEV static int tile_count(int N) {
#if defined(KEYS_DROPPED)
  return N / BC;
#elif defined(KEYS_TWICE)
  return (N + BC - 1) / BC + (N % BC != 0);
#else
  return (N + BC - 1) / BC;
#endif
}

DEV static void attention_row(const float *Q, const float *K, const float *V, float *out, int i,
                              int N, int d) {
  float o[64], l = 0.0f, m = -INFINITY;
  const float scale = the_scale(d);
  for (int c = 0; c < d; ++c) o[c] = 0.0f;
  const int tiles = tile_count(N);
  for (int tile = 0; tile < tiles; ++tile) {
    const int j0 = (tile < (N + BC - 1) / BC ? tile : tile - 1) * BC;
    float s[BC], tmax = -INFINITY;
    int key[BC];
    for (int jj = 0; jj < BC; ++jj) {
      int j = j0 + jj;
      key[jj] = j;
      if (j >= N) {
#if defined(KEYS_ZERO_PADDED)
        s[jj] = 0.0f, key[jj] = -1; /* a zero key: score 0, value 0, never masked */
#elif defined(KEYS_CLAMPED)
        key[jj] = j = N - 1, s[jj] = score(Q, K, i, j, N, d) * scale;
#else
        s[jj] = -INFINITY;
        continue;
#endif
      } else {
        s[jj] = score(Q, K, i, j, N, d) * scale;
      }
      tmax = fmaxf(tmax, s[jj]);
    }
#if defined(NO_MAX)
    const float m_new = 0.0f;
#else
    const float m_new = fmaxf(m, tmax);
#endif
    const float alpha = expf(m - m_new);
    float lt = 0.0f, ot[64];
    for (int c = 0; c < d; ++c) ot[c] = 0.0f;
    for (int jj = 0; jj < BC; ++jj) {
      const float p = expf(s[jj] - m_new);
      lt += p;
      if (key[jj] < 0 || p == 0.0f) continue;
      for (int c = 0; c < d; ++c) ot[c] += p * V[(size_t)key[jj] * d + c];
    }
#if defined(NO_RESCALE_SUM)
    l = l + lt;
#else
    l = l * alpha + lt;
#endif
    for (int c = 0; c < d; ++c) {
#if defined(NO_RESCALE) || defined(NO_RESCALE_SUM)
      o[c] = o[c] + ot[c];
#else
      o[c] = o[c] * alpha + ot[c];
#endif
#if defined(HALF_ACCUMULATION)
      o[c] = ROUND_ACC(o[c]);
#endif
    }
#if defined(HALF_ACCUMULATION)
    l = ROUND_ACC(l);
#endif
    m = m_new;
  }
  for (int c = 0; c < d; ++c) {
#if defined(NO_DIVISION)
    const float value = o[c];
#else
    const float value = o[c] / l;
#endif
#if defined(O_TRANSPOSED)
    out[(size_t)c * N + i] = value;
#else
    out[(size_t)i * d + c] = value;
#endif
  }
}

/* Where batch b's Q, K, V are read (the layout mistakes), from the whole input after the header. */
DEV static const float *q_of(const float *data, int b, int B, int N, int d) {
  const size_t nd = (size_t)N * d;
#if defined(PLANAR_INPUT) || defined(BATCH_STRIDE_ND)
  return data + b * nd;
#elif defined(BATCH_ZERO_EVERYWHERE)
  (void)b;
  return data;
#else
  return data + 3 * b * nd;
#endif
}

DEV static const float *k_of(const float *data, int b, int B, int N, int d) {
#if defined(PLANAR_INPUT)
  return data + ((size_t)B + b) * N * d;
#else
  return q_of(data, b, B, N, d) + (size_t)N * d;
#endif
}

DEV static const float *v_of(const float *data, int b, int B, int N, int d) {
#if defined(PLANAR_INPUT)
  return data + (2 * (size_t)B + b) * N * d;
#else
  return k_of(data, b, B, N, d) + (size_t)N * d;
#endif
}

/* Which output batch batch b is written to, and the rows computed (the last partial tile of
 * rows skipped by ROWS_UNWRITTEN). */
DEV static int out_batch(int b) {
#if defined(PREVIOUS_BATCH)
  return b + 1;
#else
  return b;
#endif
}

DEV static int rows_computed(int N) {
#if defined(ROWS_UNWRITTEN)
  return N / BR * BR;
#else
  return N;
#endif
}
/* solve() on device pointers (Q, K, V, O each B x N x d): one thread per query row. */
__global__ void attention(const float *Q, const float *K, const float *V, float *O, int B, int N,
                          int d) {
  const int b = blockIdx.y, i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows_computed(N) || out_batch(b) >= B) return;
#if defined(BATCH_ZERO_EVERYWHERE)
  const size_t in_off = 0;
#else
  const size_t in_off = (size_t)b * N * d;
#endif
  attention_row(Q + in_off, K + in_off, V + in_off, O + (size_t)out_batch(b) * N * d, i, N, d);
}

extern "C" void solve(const float *Q, const float *K, const float *V, float *O, int B, int N,
                      int d) {
  dim3 grid((N + 63) / 64, B);
  attention<<<grid, 64>>>(Q, K, V, O, B, N, d);
}
