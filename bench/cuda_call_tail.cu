// The end of an empty call in runner.cu's timing, in C: what the Triton runner takes off its
// figures (`call_ms` in worker/harness/triton_runner.py, ~8-10 us in Python on an H100) and
// runner.cu does not. Times 64 x 5 calls the way runner.cu's timed_call does, with no solve():
// the L2 flush (a memset over twice the L2), the start event, cudaDeviceSynchronize, the stop
// event; prints the median and the spread of start-to-stop. Their difference from the Python
// runner's figure is what a CUDA kernel pays on a board where Triton kernels rank beside it.
//
//   nvcc -O2 -o /tmp/cuda_call_tail bench/cuda_call_tail.cu && /tmp/cuda_call_tail
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

int main() {
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  size_t bytes = 2 * (size_t)(l2 > 0 ? l2 : (64 << 20));
  void* flush = nullptr;
  if (cudaMalloc(&flush, bytes) != cudaSuccess) return 1;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int round = 0; round < 5; ++round) {
    std::vector<float> ms(64);
    for (int i = 0; i < 64; ++i) {
      cudaMemsetAsync(flush, i & 0xFF, bytes, 0);
      cudaEventRecord(start, 0);
      cudaDeviceSynchronize();
      cudaEventRecord(stop, 0);
      cudaEventSynchronize(stop);
      cudaEventElapsedTime(&ms[i], start, stop);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("round %d: end of an empty call, median %.1f us, min %.1f, p90 %.1f\n", round,
                ms[32] * 1e3, ms[0] * 1e3, ms[57] * 1e3);
  }
  return 0;
}
