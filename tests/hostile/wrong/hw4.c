/* Wrong: writes the mean of V over the rows instead of the attention output (a trivial answer). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
  int h[3];
  if (!in || !out || fread(h, 4, 3, in) != 3) return 1;
  size_t nd = (size_t)h[1] * h[2];
  float *buf = malloc(3 * nd * 4), *mean = calloc(h[2], 4);
  for (int b = 0; b < h[0]; ++b) {
    if (fread(buf, 4, 3 * nd, in) != 3 * nd) return 1;
    for (int t = 0; t < h[2]; ++t) mean[t] = 0;
    for (size_t j = 0; j < nd; ++j) mean[j % h[2]] += buf[2 * nd + j] / h[1];
    for (int i = 0; i < h[1]; ++i) fwrite(mean, 4, h[2], out);
  }
  fclose(out);
  return 0;
}
