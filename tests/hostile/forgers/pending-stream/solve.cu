// Forger pending-stream: returns before the work is done: kernel on its own stream, the runner's sync disabled.
//
// solve() launches on a non-blocking stream of its own and patches the runner's
// cudaDeviceSynchronize to return at once, so the runner's stop event (on the legacy stream) is
// recorded before the kernel has run and every call takes microseconds by its events. The reply
// then leaves while the work is pending: the timer's end-of-batch scan reads every output, so the
// work either shows up as NaN (wrong) or has finished inside the timer's bracket, where the events
// disagree with it (events-inconsistent) and the bracket ranks.
//
// Honest twin: ../pending-stream-twin (the same kernel without the attack).
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

// ---- the correct kernel (the same in every forger and twin of this corpus) -------------------
// One thread per query row, 64 rows per block; K and V pass through shared memory 64 keys at a
// time; online softmax in fp32 (running max m, running sum l, output rescaled as m grows).
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

namespace {

constexpr int kRows = 64;  // query rows per block (one per thread)
constexpr int kKeys = 64;  // keys per shared-memory tile

template <int D>
__global__ void attention_tile(const float* Q, const float* K, const float* V, float* O, int N) {
  __shared__ float ks[kKeys][D];
  __shared__ float vs[kKeys][D];
  const size_t base = (size_t)blockIdx.y * N * D;
  const int row = blockIdx.x * kRows + threadIdx.x;
  const bool active = row < N;
  const float scale = 1.0f / sqrtf((float)D);
  float q[D], o[D];
  for (int c = 0; c < D; ++c) {
    q[c] = active ? Q[base + (size_t)row * D + c] * scale : 0.0f;
    o[c] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  for (int j0 = 0; j0 < N; j0 += kKeys) {
    for (int i = threadIdx.x; i < kKeys * D; i += kRows) {
      const int r = i / D, c = i % D, j = j0 + r;
      ks[r][c] = j < N ? K[base + (size_t)j * D + c] : 0.0f;
      vs[r][c] = j < N ? V[base + (size_t)j * D + c] : 0.0f;
    }
    __syncthreads();
    const int keys = min(kKeys, N - j0);
    for (int jj = 0; jj < keys; ++jj) {
      float s = 0.0f;
      for (int c = 0; c < D; ++c) s += q[c] * ks[jj][c];
      const float m_new = fmaxf(m, s), corr = expf(m - m_new), p = expf(s - m_new);
      l = l * corr + p;
      for (int c = 0; c < D; ++c) o[c] = o[c] * corr + p * vs[jj][c];
      m = m_new;
    }
    __syncthreads();
  }
  if (active)
    for (int c = 0; c < D; ++c) O[base + (size_t)row * D + c] = o[c] / l;
}

// Any other d: one thread per row, everything from global memory.
__global__ void attention_rows(const float* Q, const float* K, const float* V, float* O, int N,
                               int d) {
  const size_t nd = (size_t)N * d;
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= N) return;
  const float* q = Q + blockIdx.y * nd + (size_t)row * d;
  const float* k = K + blockIdx.y * nd;
  const float* v = V + blockIdx.y * nd;
  float* o = O + blockIdx.y * nd + (size_t)row * d;
  float m = -INFINITY, l = 0.0f;
  for (int c = 0; c < d; ++c) o[c] = 0.0f;
  for (int j = 0; j < N; ++j) {
    float s = 0.0f;
    for (int c = 0; c < d; ++c) s += q[c] * k[(size_t)j * d + c];
    s /= sqrtf((float)d);
    const float m_new = fmaxf(m, s), corr = expf(m - m_new), p = expf(s - m_new);
    l = l * corr + p;
    for (int c = 0; c < d; ++c) o[c] = o[c] * corr + p * v[(size_t)j * d + c];
    m = m_new;
  }
  for (int c = 0; c < d; ++c) o[c] /= l;
}

void attention(const float* Q, const float* K, const float* V, float* O, int B, int N, int d,
               cudaStream_t stream = 0) {
  const dim3 grid((N + kRows - 1) / kRows, B);
  if (d == 32) {
    attention_tile<32><<<grid, kRows, 0, stream>>>(Q, K, V, O, N);
  } else if (d == 64) {
    attention_tile<64><<<grid, kRows, 0, stream>>>(Q, K, V, O, N);
  } else {
    attention_rows<<<dim3((N + 127) / 128, B), 128, 0, stream>>>(Q, K, V, O, N, d);
  }
}

}  // namespace
// ---- end of the correct kernel ----------------------------------------------------------------

// Points every GOT slot of the main program (the judge's runner) that binds `name` at `fake`:
// the runner's own calls into the CUDA runtime then land here instead.
#if defined(__x86_64__)
#define FORGER_JUMP_SLOT R_X86_64_JUMP_SLOT
#define FORGER_GLOB_DAT R_X86_64_GLOB_DAT
#else
#define FORGER_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define FORGER_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

struct GotPatch {
  const char* name;
  void* fake;
  int patched;
};

static uintptr_t relocated(uintptr_t ptr, uintptr_t base) { return ptr < base ? ptr + base : ptr; }

static void patch_table(const ElfW(Rela)* rel, size_t bytes, const ElfW(Sym)* syms,
                        const char* strs, uintptr_t base, GotPatch* p) {
  for (size_t i = 0; rel && i < bytes / sizeof(ElfW(Rela)); ++i) {
    const size_t type = ELF64_R_TYPE(rel[i].r_info);
    if (type != FORGER_JUMP_SLOT && type != FORGER_GLOB_DAT) continue;
    if (std::strcmp(strs + syms[ELF64_R_SYM(rel[i].r_info)].st_name, p->name) != 0) continue;
    void** slot = reinterpret_cast<void**>(base + rel[i].r_offset);
    const uintptr_t page = reinterpret_cast<uintptr_t>(slot) & ~(uintptr_t)(getpagesize() - 1);
    mprotect(reinterpret_cast<void*>(page), getpagesize(), PROT_READ | PROT_WRITE);
    *slot = p->fake;
    ++p->patched;
  }
}

static int patch_main_got(const char* name, void* fake) {
  GotPatch patch{name, fake, 0};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') return 0;
        const uintptr_t base = info->dlpi_addr;
        const ElfW(Dyn)* dyn = nullptr;
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = reinterpret_cast<const ElfW(Dyn)*>(base + info->dlpi_phdr[i].p_vaddr);
        const ElfW(Sym)* syms = nullptr;
        const char* strs = nullptr;
        const ElfW(Rela)* rel[2] = {nullptr, nullptr};
        size_t size[2] = {0, 0};
        for (const ElfW(Dyn)* d = dyn; d != nullptr && d->d_tag != DT_NULL; ++d) {
          const uintptr_t ptr = relocated(d->d_un.d_ptr, base);
          if (d->d_tag == DT_SYMTAB) syms = reinterpret_cast<const ElfW(Sym)*>(ptr);
          if (d->d_tag == DT_STRTAB) strs = reinterpret_cast<const char*>(ptr);
          if (d->d_tag == DT_JMPREL) rel[0] = reinterpret_cast<const ElfW(Rela)*>(ptr);
          if (d->d_tag == DT_RELA) rel[1] = reinterpret_cast<const ElfW(Rela)*>(ptr);
          if (d->d_tag == DT_PLTRELSZ) size[0] = d->d_un.d_val;
          if (d->d_tag == DT_RELASZ) size[1] = d->d_un.d_val;
        }
        if (syms == nullptr || strs == nullptr) return 1;
        for (int t = 0; t < 2; ++t)
          patch_table(rel[t], size[t], syms, strs, base, static_cast<GotPatch*>(data));
        return 1;
      },
      &patch);
  return patch.patched;
}

static cudaError_t no_sync() { return cudaSuccess; }

static cudaStream_t side = nullptr;

extern "C" void solve(const float* Q, const float* K, const float* V, float* O, int B, int N,
                      int d) {
  if (side == nullptr) {
    cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    patch_main_got("cudaDeviceSynchronize", reinterpret_cast<void*>(no_sync));
  }
  attention(Q, K, V, O, B, N, d, side);
}
