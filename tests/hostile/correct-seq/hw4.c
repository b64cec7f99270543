/* A correct sequential solution in the style of the course's seq-attention.c:
 * for each batch, O = softmax(Q K^T / sqrt(d)) V with the row maximum subtracted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void read_exact(float *dst, size_t n, FILE *f) {
  if (fread(dst, sizeof(float), n, f) != n) {
    fprintf(stderr, "short input\n");
    exit(1);
  }
}

static void attention_row(const float *q, const float *K, const float *V, float *o, float *s,
                          int N, int d) {
  float scale = 1.0f / sqrtf((float)d), max = -INFINITY;
  for (int j = 0; j < N; ++j) {
    float dot = 0.0f;
    for (int t = 0; t < d; ++t) dot += q[t] * K[(size_t)j * d + t];
    s[j] = dot * scale;
    if (s[j] > max) max = s[j];
  }
  double sum = 0.0;
  for (int j = 0; j < N; ++j) {
    s[j] = expf(s[j] - max);
    sum += s[j];
  }
  for (int t = 0; t < d; ++t) {
    double acc = 0.0;
    for (int j = 0; j < N; ++j) acc += s[j] * V[(size_t)j * d + t];
    o[t] = (float)(acc / sum);
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s INPUT OUTPUT\n", argv[0]);
    return 1;
  }
  FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
  int hdr[3];
  if (!in || !out || fread(hdr, sizeof(int), 3, in) != 3) return 1;
  int B = hdr[0], N = hdr[1], d = hdr[2];
  size_t nd = (size_t)N * d;
  float *Q = malloc(nd * 4), *K = malloc(nd * 4), *V = malloc(nd * 4), *O = malloc(nd * 4);
  float *s = malloc((size_t)N * 4);
  for (int b = 0; b < B; ++b) {
    read_exact(Q, nd, in);
    read_exact(K, nd, in);
    read_exact(V, nd, in);
    for (int i = 0; i < N; ++i) attention_row(Q + (size_t)i * d, K, V, O + (size_t)i * d, s, N, d);
    fwrite(O, sizeof(float), nd, out);
  }
  fclose(out);
  fclose(in);
  return 0;
}
