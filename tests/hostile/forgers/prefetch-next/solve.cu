// Forger prefetch-next: every call also starts the next call, on the next call's inputs.
//
// Flash-decoding's split of the keys, across two calls: while a call finishes its own rows over
// the second half of the keys (merged with the first half, done the call before), the first half
// of the next call's rows runs beside it on a second stream, read from the next slot (the batch's
// calls sit in consecutive slots). Every call does one call's work, but as two kernels side by
// side, filling a GPU that one call leaves mostly idle; every call looks alike. With a batch's
// inputs all written before its first call this was right and faster than its twin. Now a call's
// inputs are written only when its turn comes: the half done ahead was done on stale inputs, and
// the merged output is wrong.
//
// Honest twin: ../prefetch-next-twin (the same kernel without the attack).
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

// Attention of one call over the keys [j_begin, j_end) only (the split of flash-decoding): the
// partial state of each row (max m, sum l, unnormalised o) into `part`, or, given the other
// keys' partial state in `prev`, the merged output into O.
template <int D>
__global__ void attention_part(const float* Q, const float* K, const float* V, int N,
                               int j_begin, int j_end, float* part, const float* prev, float* O) {
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
  for (int j0 = j_begin; j0 < j_end; j0 += kKeys) {
    for (int i = threadIdx.x; i < kKeys * D; i += kRows) {
      const int r = i / D, c = i % D, j = j0 + r;
      ks[r][c] = j < j_end ? K[base + (size_t)j * D + c] : 0.0f;
      vs[r][c] = j < j_end ? V[base + (size_t)j * D + c] : 0.0f;
    }
    __syncthreads();
    const int keys = min(kKeys, j_end - j0);
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
  if (!active) return;
  const size_t at = ((size_t)blockIdx.y * N + row) * (D + 2);
  if (prev == nullptr) {
    part[at] = m, part[at + 1] = l;
    for (int c = 0; c < D; ++c) part[at + 2 + c] = o[c];
    return;
  }
  const float* other = prev + at;
  const float top = fmaxf(m, other[0]), a = expf(m - top), b = expf(other[0] - top);
  const float total = l * a + other[1] * b;
  for (int c = 0; c < D; ++c) O[base + (size_t)row * D + c] = (o[c] * a + other[2 + c] * b) / total;
}

static void part(const float* Q, const float* K, const float* V, int B, int N, int d, int j_begin,
                 int j_end, float* state, const float* prev, float* O, cudaStream_t stream) {
  const dim3 grid((N + kRows - 1) / kRows, B);
  if (d == 32)
    attention_part<32><<<grid, kRows, 0, stream>>>(Q, K, V, N, j_begin, j_end, state, prev, O);
  else
    attention_part<64><<<grid, kRows, 0, stream>>>(Q, K, V, N, j_begin, j_end, state, prev, O);
}

static forger::Tracker where;
static float* states[2] = {nullptr, nullptr};  // a call's first half of the keys, done ahead
static int64_t ahead = -1;                     // the slot whose first half states[mine] holds
static int mine = 0;

extern "C" void solve(const float* Q, const float* K, const float* V, float* O, int B, int N,
                      int d) {
  const size_t bytes = (size_t)B * N * (d + 2) * sizeof(float);
  const bool attack = where.see(Q, K) && (d == 32 || d == 64);
  if (states[1] == nullptr && (cudaMalloc(&states[0], bytes) != cudaSuccess ||
                               cudaMalloc(&states[1], bytes) != cudaSuccess))
    states[1] = nullptr;
  if (!attack || states[1] == nullptr) return attention(Q, K, V, O, B, N, d);
  const int half = (N / 2 + kKeys - 1) / kKeys * kKeys;
  if (ahead == where.slot)  // the first half was done during the previous call: the rest, merged
    part(Q, K, V, B, N, d, half, N, nullptr, states[mine], O, where.lanes[0]);
  else
    attention(Q, K, V, O, B, N, d, where.lanes[0]);
  ahead = -1;
  if (where.left() > 1) {  // meanwhile, beside it: the first half of the next call, on its inputs
    const uint32_t s = where.slot_at(1);
    const forger::Pool& p = where.pool;
    part(p.at(s, 0), p.at(s, 1), p.at(s, 2), B, N, d, 0, half, states[1 - mine], nullptr,
         nullptr, where.lanes[1]);
    ahead = s, mine = 1 - mine;
  }
}
