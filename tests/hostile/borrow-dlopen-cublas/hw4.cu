// The honest program (tests/hostile/cuda-correct, sent along as honest.cuh) with its main
// renamed, and what this case adds around it.
#define main real_main
#include "honest.cuh"
#undef main

// A library reached by a name built at run time: the build-time check cannot see "libcublas"
// in the binary, but the kernel cuBLAS runs is in the run's census, and not compiled from the
// submission: BK. (The answer itself comes from the honest kernel; one cuBLAS call is enough.)
#include <dlfcn.h>
#include <string>
typedef int (*create_t)(void**);
typedef int (*sgemm_t)(void*, int, int, int, int, int, const float*, const float*, int,
                       const float*, int, const float*, float*, int);
static void borrow() {
  const char* tails[] = {".so", ".so.13", ".so.12"};
  void* lib = nullptr;
  for (const char* tail : tails) {
    std::string name = std::string("lib") + "cu" + "blas" + tail;
    if ((lib = dlopen(name.c_str(), RTLD_NOW)) != nullptr) break;
    name = std::string("/usr/local/cuda/lib64/") + "lib" + "cu" + "blas" + tail;
    if ((lib = dlopen(name.c_str(), RTLD_NOW)) != nullptr) break;
  }
  if (lib == nullptr) { fprintf(stderr, "no library found\n"); return; }
  create_t create = (create_t)dlsym(lib, (std::string("cublas") + "Create_v2").c_str());
  sgemm_t sgemm = (sgemm_t)dlsym(lib, (std::string("cublas") + "Sgemm_v2").c_str());
  void* handle = nullptr;
  float *a, one = 1.0f, zero = 0.0f;
  if (!create || !sgemm || create(&handle) != 0) return;
  cudaMalloc(&a, 3 * 256 * 256 * sizeof(float));
  sgemm(handle, 0, 0, 256, 256, 256, &one, a, 256, a + 65536, 256, &zero, a + 131072, 256);
  cudaDeviceSynchronize();
}
int main(int argc, char** argv) {
  borrow();
  return real_main(argc, argv);
}
