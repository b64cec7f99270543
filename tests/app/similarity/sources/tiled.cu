// hw4: FlashAttention forward, one block per (batch, 32-row tile of Q), K/V tiles in shared memory.
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BR 32
#define BC 32
#define MAX_D 64

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

__device__ float warp_max(float value) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        value = fmaxf(value, __shfl_xor_sync(0xffffffff, value, offset));
    }
    return value;
}

__device__ float warp_sum(float value) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        value += __shfl_xor_sync(0xffffffff, value, offset);
    }
    return value;
}

// blockDim = (32, BR): lane x owns key column x of the tile, warp y owns query row y.
__global__ void flash_kernel(const float *q, const float *k, const float *v, float *o,
                             int n, int dim, float scale) {
    __shared__ float q_tile[BR][MAX_D];
    __shared__ float k_tile[BC][MAX_D + 1];
    __shared__ float v_tile[BC][MAX_D];
    int lane = threadIdx.x;
    int row = threadIdx.y;
    size_t batch = (size_t)blockIdx.y * n * dim;
    int q_row = blockIdx.x * BR + row;
    for (int c = lane; c < dim; c += 32) {
        q_tile[row][c] = q_row < n ? q[batch + (size_t)q_row * dim + c] * scale : 0.0f;
    }
    float m_prev = -INFINITY;
    float l_prev = 0.0f;
    float acc[MAX_D / 32];
    for (int t = 0; t < MAX_D / 32; t++) {
        acc[t] = 0.0f;
    }
    for (int kv = 0; kv < n; kv += BC) {
        int k_row = kv + row;
        for (int c = lane; c < dim; c += 32) {
            k_tile[row][c] = k_row < n ? k[batch + (size_t)k_row * dim + c] : 0.0f;
            v_tile[row][c] = k_row < n ? v[batch + (size_t)k_row * dim + c] : 0.0f;
        }
        __syncthreads();
        float s = -INFINITY;
        if (kv + lane < n) {
            s = 0.0f;
            for (int c = 0; c < dim; c++) {
                s += q_tile[row][c] * k_tile[lane][c];
            }
        }
        float m_new = fmaxf(m_prev, warp_max(s));
        float p = kv + lane < n ? __expf(s - m_new) : 0.0f;
        float correction = __expf(m_prev - m_new);
        l_prev = l_prev * correction + warp_sum(p);
        for (int t = 0; t < MAX_D / 32; t++) {
            int c = lane + 32 * t;
            float pv = 0.0f;
            for (int j = 0; j < BC; j++) {
                pv += __shfl_sync(0xffffffff, p, j) * v_tile[j][c < dim ? c : 0];
            }
            acc[t] = acc[t] * correction + pv;
        }
        m_prev = m_new;
        __syncthreads();
    }
    if (q_row < n) {
        for (int t = 0; t < MAX_D / 32; t++) {
            int c = lane + 32 * t;
            if (c < dim) {
                o[batch + (size_t)q_row * dim + c] = acc[t] / l_prev;
            }
        }
    }
}

void check(cudaError_t err, const char *what) {
    if (err != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(err));
        exit(1);
    }
}

void flash_attention_gpu() {
    size_t bytes = (size_t)B * N * d * sizeof(float);
    float *dq, *dk, *dv, *dout;
    check(cudaMalloc(&dq, bytes), "malloc q");
    check(cudaMalloc(&dk, bytes), "malloc k");
    check(cudaMalloc(&dv, bytes), "malloc v");
    check(cudaMalloc(&dout, bytes), "malloc o");
    check(cudaMemcpy(dq, Q, bytes, cudaMemcpyHostToDevice), "copy q");
    check(cudaMemcpy(dk, K, bytes, cudaMemcpyHostToDevice), "copy k");
    check(cudaMemcpy(dv, V, bytes, cudaMemcpyHostToDevice), "copy v");
    dim3 block(32, BR);
    dim3 grid((N + BR - 1) / BR, B);
    flash_kernel<<<grid, block>>>(dq, dk, dv, dout, N, d, 1.0f / sqrtf((float)d));
    check(cudaGetLastError(), "launch");
    check(cudaMemcpy(O, dout, bytes, cudaMemcpyDeviceToHost), "copy o");
    cudaFree(dq);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(dout);
}

int main(int argc, char *argv[]) {
    if (argc != 3) {
        printf("Usage: %s <input_filename> <output_filename>\n", argv[0]);
        return 1;
    }
    input(argv[1]);
    flash_attention_gpu();
    output(argv[2]);
    return 0;
}
