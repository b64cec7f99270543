// Forger detour-clock: detours clock_gettime (dlsym + code patch) so time in the process runs 100x slower.
//
// On its first call solve() finds clock_gettime with dlsym and overwrites its first bytes with a
// jump to a version whose CLOCK_MONOTONIC runs 100x slower: any judge reading the clock in this
// process would see 100x shorter calls. The judge's clock is in the timer's process, which this
// code cannot touch: the figure is the twin's (and the runner's CUDA events do not use it).
//
// Honest twin: ../detour-clock-twin (the same kernel without the attack).
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <ctime>

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

static long long slow_origin_ns = -1;

static int slowed_clock(clockid_t clock, timespec* ts) {
  const int err = static_cast<int>(syscall(SYS_clock_gettime, clock, ts));
  if (err != 0 || (clock != CLOCK_MONOTONIC && clock != CLOCK_MONOTONIC_RAW)) return err;
  long long ns = ts->tv_sec * 1000000000LL + ts->tv_nsec;
  if (slow_origin_ns < 0) slow_origin_ns = ns;
  ns = slow_origin_ns + (ns - slow_origin_ns) / 100;
  ts->tv_sec = ns / 1000000000LL, ts->tv_nsec = ns % 1000000000LL;
  return 0;
}

// Overwrites the start of clock_gettime with "movabs rax, slowed_clock; jmp rax" (x86-64 only).
static void detour_clock() {
#if defined(__x86_64__)
  unsigned char* target = static_cast<unsigned char*>(dlsym(RTLD_DEFAULT, "clock_gettime"));
  if (target == nullptr) return;
  const uintptr_t page = reinterpret_cast<uintptr_t>(target) & ~(uintptr_t)(getpagesize() - 1);
  if (mprotect(reinterpret_cast<void*>(page), 2 * getpagesize(),
               PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
    return;
  unsigned char jump[12] = {0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xe0};
  const uint64_t to = reinterpret_cast<uint64_t>(&slowed_clock);
  std::memcpy(jump + 2, &to, sizeof(to));
  std::memcpy(target, jump, sizeof(jump));
  mprotect(reinterpret_cast<void*>(page), 2 * getpagesize(), PROT_READ | PROT_EXEC);
#endif
}

static bool detoured = false;

extern "C" void solve(const float* Q, const float* K, const float* V, float* O, int B, int N,
                      int d) {
  if (!detoured) {
    detoured = true;
    detour_clock();
  }
  attention(Q, K, V, O, B, N, d);
}
