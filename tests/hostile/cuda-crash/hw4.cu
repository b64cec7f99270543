// Crashes: a kernel writes far outside its buffer (illegal address), then the host aborts.
#include <cstdio>
#include <cstdlib>

__global__ void scribble(float* p) { p[(size_t)threadIdx.x << 36] = 1.0f; }

int main(int argc, char** argv) {
  float* d = nullptr;
  cudaMalloc(&d, 1024);
  scribble<<<1, 32>>>(d);
  cudaError_t err = cudaDeviceSynchronize();
  fprintf(stderr, "kernel: %s\n", cudaGetErrorString(err));
  if (err != cudaSuccess) abort();
  return 0;
}
