/* The course's sequential baseline in spirit: O = softmax(Q K^T / sqrt(d)) V per batch.
   Optional: FLASHJUDGE_TEST_SLEEP-style delays are compiled in with -DSLEEP_S=<seconds>. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) return 2;
#ifdef SLEEP_S
    sleep(SLEEP_S);
#endif
    FILE *in = fopen(argv[1], "rb");
    if (!in) return 3;
    int B, N, d;
    if (fread(&B, 4, 1, in) != 1 || fread(&N, 4, 1, in) != 1 || fread(&d, 4, 1, in) != 1) return 4;
    size_t nd = (size_t)N * d;
    float *q = malloc(nd * 4), *k = malloc(nd * 4), *v = malloc(nd * 4), *o = malloc(nd * 4);
    double *s = malloc((size_t)N * sizeof(double));
    FILE *out = fopen(argv[2], "wb");
    if (!out) return 5;
    double scale = 1.0 / sqrt((double)d);
    for (int b = 0; b < B; b++) {
        if (fread(q, 4, nd, in) != nd || fread(k, 4, nd, in) != nd || fread(v, 4, nd, in) != nd) return 6;
        for (int i = 0; i < N; i++) {
            double mx = -1e300, sum = 0;
            for (int j = 0; j < N; j++) {
                double acc = 0;
                for (int x = 0; x < d; x++) acc += (double)q[i * d + x] * k[j * d + x];
                s[j] = acc * scale;
                if (s[j] > mx) mx = s[j];
            }
            for (int j = 0; j < N; j++) { s[j] = exp(s[j] - mx); sum += s[j]; }
            for (int x = 0; x < d; x++) {
                double acc = 0;
                for (int j = 0; j < N; j++) acc += s[j] * v[j * d + x];
                o[i * d + x] = (float)(acc / sum);
            }
        }
        fwrite(o, 4, nd, out);
    }
    fclose(out);
    fclose(in);
    return 0;
}
