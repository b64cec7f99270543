// Sequential FlashAttention: the course's starter code. Students keep input() and output().
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int B, N, d;
float *Q, *K, *V, *O;

void input(char *input_filename) {
    FILE *file = fopen(input_filename, "rb");
    fread(&B, sizeof(int), 1, file);
    fread(&N, sizeof(int), 1, file);
    fread(&d, sizeof(int), 1, file);
    Q = (float *)malloc(B * N * d * sizeof(float));
    K = (float *)malloc(B * N * d * sizeof(float));
    V = (float *)malloc(B * N * d * sizeof(float));
    O = (float *)malloc(B * N * d * sizeof(float));
    for (int i = 0; i < B; i++) {
        fread(Q + (i * N * d), sizeof(float), N * d, file);
        fread(K + (i * N * d), sizeof(float), N * d, file);
        fread(V + (i * N * d), sizeof(float), N * d, file);
    }
    memset(O, 0x00, B * N * d * sizeof(float));
    fclose(file);
}

void output(char *output_filename) {
    FILE *file = fopen(output_filename, "wb");
    fwrite(O, sizeof(float), B * N * d, file);
    free(Q);
    free(K);
    free(V);
    free(O);
    fclose(file);
}

float _max(float a, float b) { return a > b ? a : b; }
float _min(float a, float b) { return a < b ? a : b; }

void QKDotAndScalar(float *out, float *q, float *k, int br, int bc, float scalar) {
    for (int i = 0; i < br; i++) {
        for (int j = 0; j < bc; j++) {
            out[i * bc + j] = 0.0F;
            for (int t = 0; t < d; t++) {
                out[i * bc + j] += q[i * d + t] * k[j * d + t];
            }
            out[i * bc + j] *= scalar;
        }
    }
}

void RowMax(float *out, float *in, int br, int bc) {
    for (int i = 0; i < br; i++) {
        out[i] = in[i * bc];
        for (int j = 0; j < bc; j++) {
            out[i] = _max(out[i], in[i * bc + j]);
        }
    }
}

void MinusMaxAndExp(float *out, float *in, float *mx, int br, int bc) {
    for (int i = 0; i < br; i++) {
        for (int j = 0; j < bc; j++) {
            out[i * bc + j] = exp(in[i * bc + j] - mx[i]);
        }
    }
}

void RowSum(float *out, float *in, int br, int bc) {
    for (int i = 0; i < br; i++) {
        out[i] = 0.0F;
        for (int j = 0; j < bc; j++) {
            out[i] += in[i * bc + j];
        }
    }
}

void UpdateMiLiOi(float *mi, float *li, float *oi, float *mij, float *lij, float *pij,
                  float *vj, int br, int bc) {
    float *mi_new = (float *)malloc(br * sizeof(float));
    float *li_new = (float *)malloc(br * sizeof(float));
    for (int i = 0; i < br; i++) {
        mi_new[i] = _max(mi[i], mij[i]);
        li_new[i] = exp(mi[i] - mi_new[i]) * li[i] + exp(mij[i] - mi_new[i]) * lij[i];
    }
    for (int i = 0; i < br; i++) {
        for (int j = 0; j < d; j++) {
            float pv = 0.0F;
            for (int t = 0; t < bc; t++) {
                pv += pij[i * bc + t] * vj[t * d + j];
            }
            oi[i * d + j] = (li[i] * exp(mi[i] - mi_new[i]) * oi[i * d + j] +
                             exp(mij[i] - mi_new[i]) * pv) / li_new[i];
        }
    }
    memcpy(mi, mi_new, br * sizeof(float));
    memcpy(li, li_new, br * sizeof(float));
    free(mi_new);
    free(li_new);
}

void flash_attention(float *q, float *k, float *v, float *o) {
    int br = 32, bc = 32;
    int tr = N / br, tc = N / bc;
    float *l = (float *)malloc(N * sizeof(float));
    float *m = (float *)malloc(N * sizeof(float));
    memset(l, 0x00, N * sizeof(float));
    for (int i = 0; i < N; i++) {
        m[i] = -INFINITY;
    }
    float *sij = (float *)malloc(br * bc * sizeof(float));
    float *pij = (float *)malloc(br * bc * sizeof(float));
    float *mij = (float *)malloc(br * sizeof(float));
    float *lij = (float *)malloc(br * sizeof(float));
    for (int j = 0; j < tc; j++) {
        for (int i = 0; i < tr; i++) {
            QKDotAndScalar(sij, q + i * br * d, k + j * bc * d, br, bc, 1.0 / sqrt(d));
            RowMax(mij, sij, br, bc);
            MinusMaxAndExp(pij, sij, mij, br, bc);
            RowSum(lij, pij, br, bc);
            UpdateMiLiOi(m + i * br, l + i * br, o + i * br * d, mij, lij, pij, v + j * bc * d,
                         br, bc);
        }
    }
    free(sij);
    free(pij);
    free(mij);
    free(lij);
    free(l);
    free(m);
}

int main(int argc, char *argv[]) {
    if (argc != 3) {
        printf("Usage: %s <input_filename> <output_filename>\n", argv[0]);
        return 1;
    }
    input(argv[1]);
    for (int i = 0; i < B; i++) {
        flash_attention(Q + (i * N * d), K + (i * N * d), V + (i * N * d), O + (i * N * d));
    }
    output(argv[2]);
    return 0;
}
