// Takes all the GPU's memory (1 GiB at a time until cudaMalloc fails), touches it, and exits with
// an error: RE. Its memory must be free for the next submission.
#include <cstdio>

int main(void) {
  size_t total = 0;
  for (;;) {
    void* p = nullptr;
    if (cudaMalloc(&p, (size_t)1 << 30) != cudaSuccess) break;
    cudaMemset(p, 1, (size_t)1 << 30);
    total += (size_t)1 << 30;
  }
  cudaDeviceSynchronize();
  fprintf(stderr, "held %zu GiB of device memory\n", total >> 30);
  return 1;
}
