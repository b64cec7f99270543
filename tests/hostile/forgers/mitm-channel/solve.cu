// Forger mitm-channel: puts itself between the runner and the judge's channel.
//
// On its first call solve() finds the runner's socket, keeps a duplicate of it, and puts one end of
// a new socket pair in its place (dup2), so the runner now talks to a relay thread of the forger's.
// The relay passes every request on to the runner and at once answers the judge itself with a
// forged DONE of a microsecond per call; the runner's real DONE is swallowed. Unlike peek-reply and
// fork-reply this does not race the runner for the request: it lands every time. The timer scans
// every output when the (forged) reply comes: the work has barely started, the outputs are still
// poisoned, so the run is wrong.
//
// Honest twin: ../mitm-channel-twin (the same kernel without the attack).
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>

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

// The judge's channel: the one SOCK_SEQPACKET socket among the inherited descriptors.
static int find_channel() {
  for (int fd = 3; fd < 1024; ++fd) {
    int type = 0;
    socklen_t len = sizeof(type);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET) return fd;
  }
  return -1;
}

struct RunHead {
  uint32_t magic, kind, batch, calls;
};

struct FakeDone {  // the runner's DONE, byte for byte
  uint32_t magic, kind, batch, calls;
  int32_t ok;
  float ms[64];
  char text[240];
};

// Relays between the judge (`judge`, the real socket) and the runner (`runner`, our pair's end):
// requests pass on, each answered at once with a forged DONE; the runner's DONE for a request we
// answered is dropped (the one for the batch in flight when we moved in is passed on).
static void relay(int judge, int runner) {
  int forged = 0;
  char buf[1024];
  pollfd p[2] = {{judge, POLLIN, 0}, {runner, POLLIN, 0}};
  for (;;) {
    if (poll(p, 2, -1) <= 0) continue;
    if (p[0].revents & (POLLIN | POLLHUP)) {
      ssize_t n = recv(judge, buf, sizeof(buf), 0);
      if (n <= 0) return;
      send(runner, buf, n, MSG_NOSIGNAL);
      RunHead head;
      std::memcpy(&head, buf, sizeof(head));
      if (head.magic == 0x31544a46u && head.kind == 3 && head.calls <= 64) {
        FakeDone done{};
        done.magic = 0x31544a46u, done.kind = 4, done.batch = head.batch, done.calls = head.calls;
        done.ok = 1;
        for (uint32_t i = 0; i < head.calls; ++i) done.ms[i] = 0.001f;
        send(judge, &done, sizeof(done), MSG_NOSIGNAL);
        ++forged;
      }
    }
    if (p[1].revents & (POLLIN | POLLHUP)) {
      ssize_t n = recv(runner, buf, sizeof(buf), 0);
      if (n <= 0) return;
      if (forged > 0) --forged; else send(judge, buf, n, MSG_NOSIGNAL);
    }
  }
}

static std::atomic<bool> moved_in{false};

extern "C" void solve(const float* Q, const float* K, const float* V, float* O, int B, int N,
                      int d) {
  if (!moved_in.exchange(true)) {
    const int fd = find_channel();
    int pair[2];
    if (fd >= 0 && socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair) == 0) {
      const int judge = dup(fd);
      dup2(pair[0], fd);  // the runner's socket is now our pair's end
      close(pair[0]);
      std::thread(relay, judge, pair[1]).detach();
    }
  }
  attention(Q, K, V, O, B, N, d);
}
