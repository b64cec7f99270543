// Launches a kernel that never ends: TLE, and the GPU must be usable by the next submission.
#include <cstdio>

__global__ void forever(volatile int* flag) {
  while (*flag == 0) {
  }
}

int main(void) {
  int* flag = nullptr;
  cudaMalloc(&flag, sizeof(int));
  cudaMemset(flag, 0, sizeof(int));
  forever<<<132, 128>>>(flag);
  cudaDeviceSynchronize();
  return 0;
}
