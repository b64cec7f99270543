// Forgets extern "C": the symbol is mangled, so the library exports no solve(): CE.
#include <cuda_runtime.h>

void solve(const float* Q, const float* K, const float* V, float* O, int B, int N, int d) {
  cudaMemset(O, 0, (size_t)B * N * d * sizeof(float));
}
