// solve() launches a kernel that never ends: the harness is killed at its wall limit, TLE.
#include <cuda_runtime.h>

__global__ void forever(volatile float* o) {
  while (o[0] == o[0] || o[0] != o[0]) {
  }
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* O, int B, int N,
                      int d) {
  forever<<<1, 32>>>(O);
}
