// The honest program (tests/hostile/cuda-correct, sent along as honest.cuh) with its main
// renamed, and what this case adds around it.
#define main real_main
#include "honest.cuh"
#undef main

// Defeating the census: the program removes the judge's CUDA injection from its environment and
// starts itself again, so no census of its kernels exists. It gains nothing: the result is held
// for a TA (never accepted by default), whatever it computed.
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char** argv) {
  if (getenv("CUDA_INJECTION64_PATH") != nullptr) {
    unsetenv("CUDA_INJECTION64_PATH");
    execv("/proc/self/exe", argv);
  }
  return real_main(argc, argv);
}
