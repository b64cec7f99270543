// The honest program (tests/hostile/cuda-correct, sent along as honest.cuh) with its main
// renamed, and what this case adds around it.
#define main real_main
#include "honest.cuh"
#undef main

// A kernel taken out of a library's embedded image and launched through the driver API: the
// library is opened by a name built at run time, its file read for the fatbins the toolkit embeds
// (magic 0xBA55ED50), one loaded with cuModuleLoadData and one of its kernels launched with
// cuLaunchKernel. No runtime call names it and the submission never compiled it; the run's census
// sees it run: BK. (The answer itself comes from the honest kernel: one foreign launch is enough.)
// Arguments are guessed safely: the fewest parameters first, every 8-byte one a zeroed buffer.
#include <dlfcn.h>
#include <link.h>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
typedef int (*load_t)(void**, const void*);
typedef int (*count_t)(unsigned*, void*);
typedef int (*enumerate_t)(void**, unsigned, void*);
typedef int (*param_t)(void*, size_t, size_t*, size_t*);
typedef int (*name_t)(const char**, void*);
typedef int (*launch_t)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void*, void**, void**);
typedef int (*sync_t)();
struct Driver {
  load_t load; count_t count; enumerate_t enumerate; param_t param; name_t name; launch_t launch;
  sync_t sync;
};

static bool open_driver(Driver& d) {
  void* cu = dlopen("libcuda.so.1", RTLD_NOW);
  if (!cu) return false;
  d.load = (load_t)dlsym(cu, "cuModuleLoadData");
  d.count = (count_t)dlsym(cu, "cuModuleGetFunctionCount");
  d.enumerate = (enumerate_t)dlsym(cu, "cuModuleEnumerateFunctions");
  d.param = (param_t)dlsym(cu, "cuFuncGetParamInfo");
  d.name = (name_t)dlsym(cu, "cuFuncGetName");
  d.launch = (launch_t)dlsym(cu, "cuLaunchKernel");
  d.sync = (sync_t)dlsym(cu, "cuCtxSynchronize");
  return d.load && d.count && d.enumerate && d.param && d.name && d.launch && d.sync;
}

static std::string library_path() {
  const char* tails[] = {".so.13", ".so.12", ".so"};
  for (const char* tail : tails) {
    void* lib = dlopen((std::string("lib") + "cu" + "blas" + tail).c_str(), RTLD_NOW);
    if (!lib) continue;
    struct link_map* map = nullptr;
    if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map) return map->l_name;
  }
  return "";
}

static std::vector<size_t> params_of(const Driver& d, void* f) {
  std::vector<size_t> sizes;
  size_t offset, size;
  for (size_t i = 0; i < 64 && d.param(f, i, &offset, &size) == 0; ++i) sizes.push_back(size);
  return sizes;
}

// One launch of the library kernel with the fewest parameters that launches; true once one ran.
static bool launch_one(const Driver& d, void* module, void* zeros) {
  unsigned n = 0;
  if (d.count(&n, module) != 0 || n == 0) return false;
  std::vector<void*> fns(n);
  if (d.enumerate(fns.data(), n, module) != 0) return false;
  for (size_t want = 0; want <= 4; ++want) {
    for (void* f : fns) {
      std::vector<size_t> sizes = params_of(d, f);
      if (sizes.size() != want) continue;
      std::vector<uint64_t> values(sizes.size() * 64, 0);
      std::vector<void*> args;
      for (size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] == 8) values[i * 64] = (uint64_t)(uintptr_t)zeros;
        args.push_back(&values[i * 64]);
      }
      if (d.launch(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args.data(), nullptr) != 0) continue;
      const char* name = "?";
      d.name(&name, f);
      fprintf(stderr, "launched %s (%zu parameters) from the library's image\n", name, want);
      return d.sync() == 0;
    }
  }
  return false;
}

static void borrow() {
  Driver d;
  std::string path = library_path();
  if (!open_driver(d) || path.empty()) { fprintf(stderr, "no driver or library\n"); return; }
  int fd = open(path.c_str(), O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return;
  const unsigned char* file =
      (const unsigned char*)mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  void* zeros = nullptr;
  cudaMalloc(&zeros, 64 << 20);
  cudaMemset(zeros, 0, 64 << 20);
  int tried = 0;
  for (size_t at = 0; at + 16 <= (size_t)st.st_size && tried < 200; at += 8) {
    uint32_t magic;
    uint16_t version, header;
    uint64_t size;
    memcpy(&magic, file + at, 4);
    if (magic != 0xBA55ED50u) continue;
    memcpy(&version, file + at + 4, 2), memcpy(&header, file + at + 6, 2);
    memcpy(&size, file + at + 8, 8);
    if (version != 1 || header != 16 || size == 0 || at + 16 + size > (size_t)st.st_size) continue;
    ++tried;
    void* module = nullptr;
    if (d.load(&module, file + at) == 0 && launch_one(d, module, zeros)) return;
  }
  fprintf(stderr, "no library kernel launched (%d images tried in %s)\n", tried, path.c_str());
}
int main(int argc, char** argv) {
  borrow();
  return real_main(argc, argv);
}
