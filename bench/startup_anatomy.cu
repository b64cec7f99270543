// The phases of a CUDA process's life, timed from inside (bench/startup_anatomy.py drives it).
//
//   startup_anatomy [--upto init|ctx|alloc|kernel|all] [--mb N] [--signal-fd FD] [--hold-ms N]
//
// Prints one line of JSON: CLOCK_MONOTONIC seconds at each phase's end ("main" is the first line
// of main), so the driver, which records the moment before exec and the moment of exit on the
// same clock, can place every phase of start-up and teardown. With --signal-fd, one byte is
// written to that descriptor once the context exists (a cooperative "start-up is over").
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__global__ void touch(float *x, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 0.5f + 1.0f;
}

static void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        exit(2);
    }
}

int main(int argc, char **argv) {
    double t_main = now();
    const char *upto = "all";
    int mb = 256, signal_fd = -1, hold_ms = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--upto")) upto = argv[i + 1];
        else if (!strcmp(argv[i], "--mb")) mb = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--signal-fd")) signal_fd = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--hold-ms")) hold_ms = atoi(argv[i + 1]);
    }
    double t_init = 0, t_ctx = 0, t_alloc = 0, t_kernel = 0, t_free = 0, t_reset = 0;
    int devices = 0;  // cuInit and device enumeration, no context yet
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    t_init = now();
    if (strcmp(upto, "init") != 0) {
        check(cudaFree(0), "cudaFree(0)");
        t_ctx = now();
        if (signal_fd >= 0) { char b = 1; if (write(signal_fd, &b, 1) != 1) perror("signal"); }
    }
    float *x = NULL;
    size_t n = (size_t)mb << 18;  // floats in mb MiB
    if (!strcmp(upto, "alloc") || !strcmp(upto, "kernel") || !strcmp(upto, "all")) {
        check(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc");
        check(cudaMemset(x, 0, n * sizeof(float)), "cudaMemset");
        check(cudaDeviceSynchronize(), "sync");
        t_alloc = now();
    }
    if (!strcmp(upto, "kernel") || !strcmp(upto, "all")) {
        touch<<<(unsigned)((n + 255) / 256), 256>>>(x, n);
        check(cudaDeviceSynchronize(), "kernel");
        t_kernel = now();
    }
    if (hold_ms > 0) usleep(hold_ms * 1000);
    if (!strcmp(upto, "all")) {
        check(cudaFree(x), "cudaFree");
        t_free = now();
        check(cudaDeviceReset(), "reset");
        t_reset = now();
    }
    printf("{\"main\": %.6f, \"init\": %.6f, \"ctx\": %.6f, \"alloc\": %.6f, \"kernel\": %.6f, "
           "\"free\": %.6f, \"reset\": %.6f, \"end\": %.6f}\n",
           t_main, t_init, t_ctx, t_alloc, t_kernel, t_free, t_reset, now());
    return 0;
}
