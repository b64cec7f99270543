// Forger deferral-last: every call of a batch but the last returns at once; the last call computes
// the outputs of them all.
//
// Later calls finishing earlier calls' work: the batch's calls sit in consecutive slots, so the
// last one runs every call's kernel side by side (eight streams, a full GPU). With the outputs
// scanned only once the batch was over, every output was there by then and the figure was the
// batch's throughput. Now each output is scanned at the end of its own call's turn: the first call
// of a batch leaves NaN. Wrong.
//
// Honest twin: ../deferral-last-twin (the same kernel without the attack).
#include <cuda.h>

#include <cstdint>
#include <cstdio>

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

// ---- what every forger of this class knows: where the batch's other calls are ----------------
// The timer's slots are one allocation with fixed strides (protocol.cuh): K - Q from one tensor to
// the next, four tensors (Q, K, V, O) a slot, as many slots as the allocation holds (the driver's
// cuMemGetAddressRange says how large it is). A batch's calls take consecutive slots, wrapping
// round; its length is learned as the shortest run of consecutive slots seen so far (the probes
// are single calls, every later batch is full size). Until then the forger is honest.
namespace forger {

constexpr int kLanes = 8;  // streams that let the calls' kernels run side by side

struct Pool {
  char* base = nullptr;
  size_t tensor = 0, slot = 0;  // strides in bytes
  uint32_t slots = 0;
  float* at(uint32_t s, int t) const {
    return reinterpret_cast<float*>(base + (s % slots) * slot + t * tensor);
  }
};

typedef CUresult (*AddressRange)(CUdeviceptr*, size_t*, CUdeviceptr);

// The pool around Q; false when the driver does not say (the forger then stays honest).
inline bool find_pool(const float* Q, const float* K, Pool* p) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault,
                                       &found) != cudaSuccess || fn == nullptr)
    return false;
  CUdeviceptr base = 0;
  size_t size = 0;
  if (reinterpret_cast<AddressRange>(fn)(&base, &size, reinterpret_cast<CUdeviceptr>(Q)) !=
      CUDA_SUCCESS)
    return false;
  const char* q = reinterpret_cast<const char*>(Q);
  p->base = reinterpret_cast<char*>(base);
  p->tensor = static_cast<size_t>(reinterpret_cast<const char*>(K) - q);
  p->slot = 4 * p->tensor;
  p->slots = p->slot ? static_cast<uint32_t>(size / p->slot) : 0;
  return p->slots >= 2 && static_cast<size_t>(q - p->base) % p->slot == 0;
}

// Where the current call is: its slot, its place in its batch, the batch's length.
struct Tracker {
  Pool pool;
  bool tried = false, known = false;
  int64_t prev = -1;    // the previous call's slot
  uint32_t slot = 0;    // this call's slot
  uint32_t run = 0;     // calls since the current run of consecutive slots began
  uint32_t length = 0;  // the batch length (0: not learned yet)
  cudaStream_t lanes[kLanes];

  // First thing in every solve(); false while the forger knows too little to attack.
  bool see(const float* Q, const float* K) {
    if (!tried) {
      tried = true, known = find_pool(Q, K, &pool);
      for (int i = 0; known && i < kLanes; ++i) known = cudaStreamCreate(&lanes[i]) == cudaSuccess;
      if (!known) std::fprintf(stderr, "forger: the pool's layout is unknown, staying honest\n");
    }
    if (!known) return false;
    slot = static_cast<uint32_t>((reinterpret_cast<const char*>(Q) - pool.base) / pool.slot);
    const bool next = prev >= 0 && slot == (prev + 1) % pool.slots;
    if (!next && run > 0 && (length == 0 || run + 1 < length)) length = run + 1;
    run = next ? run + 1 : 0;
    prev = slot;
    return length > 1;
  }
  uint32_t position() const { return run % length; }     // 0: the batch's first call
  uint32_t left() const { return length - position(); }  // this call and the ones after it
  uint32_t slot_at(int offset) const {                   // the slot `offset` calls away
    return static_cast<uint32_t>((slot + pool.slots + offset) % pool.slots);
  }
  // The call `offset` calls away, on lane `lane` (a stream that waits for the runner's own work).
  void attend(int offset, float* out, int B, int N, int d, int lane) const {
    const uint32_t s = slot_at(offset);
    attention(pool.at(s, 0), pool.at(s, 1), pool.at(s, 2), out ? out : pool.at(s, 3), B, N, d,
              lanes[lane % kLanes]);
  }
};

}  // namespace forger
// ---- end of what every forger of this class knows --------------------------------------------

static forger::Tracker where;

extern "C" void solve(const float* Q, const float* K, const float* V, float* O, int B, int N,
                      int d) {
  if (!where.see(Q, K)) return attention(Q, K, V, O, B, N, d);
  if (where.left() > 1) return;  // nothing now: the batch's last call does it
  const int calls = static_cast<int>(where.position()) + 1;
  for (int i = 0; i < calls; ++i)  // this call and every earlier one of the batch, side by side
    where.attend(-i, nullptr, B, N, d, i);
}
