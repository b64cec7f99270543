/* Random garbage of the right size (issue 22's corpus): WA, and no mistake may be named. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 3) return 1;
  FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
  int hdr[3];
  if (!in || !out || fread(hdr, sizeof(int), 3, in) != 3) return 1;
  size_t n = (size_t)hdr[0] * hdr[1] * hdr[2];
  unsigned x = 12345u;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    float v = ((x >> 8) / 16777216.0f) * 6.0f - 3.0f;
    fwrite(&v, sizeof(float), 1, out);
  }
  fclose(out);
  fclose(in);
  return 0;
}
