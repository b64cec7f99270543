// flashjudge-timer: the trusted side (T) of a timed cuda-kernel run. No student code ever runs in
// this process; the student's solve() runs in flashjudge-runner (S), another process in another
// sandbox, which T drives over a Unix socket (protocol.cuh).
//
//   flashjudge-timer (--listen SOCKET | --fd N) --input IN --fresh IN2 --out1 O1 --out2 O2
//                    --report JSON --limit S --budget S [--target-batch S] [--pool-gb G]
//                    [--rows R] [--calibrate]
//
// T owns every buffer S computes on: a pool of (Q, K, V, O) slots in GPU memory it exports to S
// (shared_pool.cuh). For each batch (timer_plan.cuh) T draws fresh inputs into its private memory,
// resets persisting L2 lines and flushes L2. Then, one call at a time, T poisons the call's O with
// NaN, writes the call's inputs into its slot, sends RUN for that call alone and waits for DONE;
// right after DONE it snapshots secretly chosen rows of that output and scans every value for
// NaN. A call's inputs do not exist in S's reach before its turn, and its output is checked at the
// end of its turn: nothing a call computes for another counts for either. The batch's bracket runs
// from the first call's inputs to the last call's scan, on T's clock. Then, outside the bracket,
// T computes the sampled rows' exact answers in double from its private inputs, checks the inputs
// were left alone and the test's input gives the same output again. T judges nothing: it writes
// what it saw (timer_io.cuh) and the judge decides (worker/harness/verify.py). Exit 0: report
// written; 2: T's own failure (the judge's SE).
#include <cuda_runtime.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <string>
#include <vector>

#include "protocol.cuh"
#include "shared_pool.cuh"
#include "timer_io.cuh"
#include "timer_kernels.cuh"
#include "timer_plan.cuh"

using namespace fjt;

static const int EXIT_SETUP = 2;
static const int ACCEPT_TIMEOUT_MS = 60000;
static const int READY_TIMEOUT_MS = 120000;  // CUDA start-up plus loading the student's library

[[noreturn]] static void die(const std::string& what) {
  std::fprintf(stderr, "flashjudge-timer: %s\n", what.c_str());
  std::exit(EXIT_SETUP);
}

static void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(e));
}

static double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

static uint64_t secret() {
  uint64_t x = 0;
  if (getrandom(&x, sizeof(x), 0) != (ssize_t)sizeof(x)) die("getrandom failed");
  return x;
}

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

template <typename T>
static T* dev_alloc(size_t count) {
  T* p = nullptr;
  check(cudaMalloc(&p, count * sizeof(T)), "cudaMalloc");
  return p;
}

struct Gpu {
  HostInput in;
  size_t n = 0, bytes = 0, tensor_stride = 0, slot_stride = 0, pool_bytes = 0;
  uint32_t slots = 0;
  int rows = 64;
  char* pool = nullptr;
  int pool_fd = -1;
  std::vector<float*> priv;       // [slot * 3 + t]: T's copy of the slot's Q, K, V
  float* official[3] = {};        // the test's input
  float* fresh[3] = {};           // the judge's fresh input
  float *keep1 = nullptr, *keep2 = nullptr, *keep_rep = nullptr;  // outputs kept
  float *snap = nullptr, *err = nullptr;
  unsigned long long *nonfinite = nullptr, *changed = nullptr;
  unsigned* diff_bits = nullptr;
  void* flush = nullptr;
  size_t flush_bytes = 0;
  cudaStream_t stream;
  cudaEvent_t ev0, ev1;
  bool have1 = false, have2 = false;
  uint32_t requests = 0;  // RUN messages sent (each RUN's number, which its DONE echoes)

  float* slot_tensor(uint32_t slot, int t) const {
    return reinterpret_cast<float*>(pool + slot * slot_stride + t * tensor_stride);
  }
};

static void upload(float* const dst[3], const HostInput& in) {
  const std::vector<float>* src[3] = {&in.q, &in.k, &in.v};
  for (int t = 0; t < 3; ++t)
    check(cudaMemcpy(dst[t], src[t]->data(), in.elements * 4, cudaMemcpyHostToDevice), "upload");
}

static void alloc_pool(Gpu& g, const Options& o) {
  DriverApi api;
  std::string err;
  if (!load_driver(api, err)) die(err);
  g.tensor_stride = round_up(g.bytes, 4096);
  g.slot_stride = 4 * g.tensor_stride;
  double cap = o.max_pool_gb * (1 << 30);
  g.slots = (uint32_t)std::max(1.0, std::min((double)kMaxCalls, cap / g.slot_stride));
  g.pool_bytes = pool_size(api, 0, g.slots * g.slot_stride);
  CUdeviceptr ptr = 0;
  if (g.pool_bytes == 0 || !create_pool(api, 0, g.pool_bytes, &ptr, &g.pool_fd, err))
    die("cannot create the shared memory: " + err);
  g.pool = reinterpret_cast<char*>(ptr);
}

static void setup(Gpu& g, const Options& o) {
  std::string e = read_input(o.input, g.in);
  if (!e.empty()) die(e);
  if (g.in.d > kMaxD) die("d is larger than the timer's reference handles");
  HostInput fresh;
  if (!o.calibrate && !(e = read_input(o.fresh, fresh)).empty()) die(e);
  if (!o.calibrate && (fresh.B != g.in.B || fresh.N != g.in.N || fresh.d != g.in.d))
    die("the two inputs differ in shape");
  check(cudaFree(0), "no usable CUDA device");
  g.n = g.in.elements, g.bytes = g.n * 4, g.rows = o.rows;
  alloc_pool(g, o);
  for (uint32_t i = 0; i < g.slots * 3; ++i) g.priv.push_back(dev_alloc<float>(g.n));
  for (int t = 0; t < 3; ++t) g.official[t] = dev_alloc<float>(g.n);
  upload(g.official, g.in);
  if (!o.calibrate) {
    for (int t = 0; t < 3; ++t) g.fresh[t] = dev_alloc<float>(g.n);
    upload(g.fresh, fresh);
  }
  g.keep1 = dev_alloc<float>(g.n), g.keep2 = dev_alloc<float>(g.n);
  g.keep_rep = dev_alloc<float>(g.n);
  g.snap = dev_alloc<float>((size_t)kMaxCalls * g.rows * g.in.d);
  g.err = dev_alloc<float>((size_t)kMaxCalls * g.rows);
  g.nonfinite = dev_alloc<unsigned long long>(kMaxCalls);
  g.changed = dev_alloc<unsigned long long>(kMaxCalls);
  g.diff_bits = dev_alloc<unsigned>(1);
  int l2 = 0;
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "L2 size");
  g.flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : (64 << 20));
  g.flush = dev_alloc<char>(g.flush_bytes);
  check(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking), "stream");
  check(cudaEventCreate(&g.ev0), "event"), check(cudaEventCreate(&g.ev1), "event");
  check(cudaDeviceSynchronize(), "setup");
}

#include "timer_batch.cuh"

// Listening starts before the GPU is set up, so a runner that finds nobody there knows the timer
// is gone (it retries only while the socket does not exist yet).
static int start_listening(const Options& o) {
  if (o.fd >= 0) return -1;
  int listener = listen_at(o.listen);
  if (listener < 0) die(std::string("cannot listen: ") + std::strerror(-listener));
  return listener;
}

static int open_channel(const Options& o, int listener) {
  if (o.fd >= 0) return o.fd;
  return accept_one(listener, ACCEPT_TIMEOUT_MS);  // < 0: the runner never came (recorded)
}

// HELLO (with the memory), then the runner's READY; "ok" or what went wrong on its side.
static std::string handshake(int sock, const Gpu& g) {
  if (sock < 0) return "the runner never connected";
  Hello h = make<Hello>(Kind::Hello);
  h.B = g.in.B, h.N = g.in.N, h.d = g.in.d, h.slots = g.slots;
  h.pool_bytes = g.pool_bytes, h.slot_stride = g.slot_stride, h.tensor_stride = g.tensor_stride;
  if (send_msg(sock, &h, sizeof(h), g.pool_fd) != 0) return "the runner hung up before HELLO";
  Ready r;
  long n = recv_msg(sock, &r, sizeof(r), READY_TIMEOUT_MS);
  if (n == -ETIMEDOUT) return "the runner was not ready in time";
  if (n <= 0) return "the runner ended before it was ready";
  if (const char* why = check_ready(r, n)) return why;
  r.text[kTextBytes - 1] = 0;
  return r.ok ? "ok" : std::string("the runner failed: ") + r.text;
}

int main(int argc, char** argv) {
  Options o;
  std::string e = parse_options(argc, argv, o);
  if (!e.empty()) die(e);
  int listener = start_listening(o);
  Gpu g;
  setup(g, o);
  int sock = open_channel(o, listener);
  Outcome out;
  out.runner = handshake(sock, g);
  if (out.runner == "ok") run_batches(sock, g, o, out);
  if (sock >= 0) {
    Quit q = make<Quit>(Kind::Quit);
    send_msg(sock, &q, sizeof(q));
  }
  if (!o.calibrate) save_outputs(g, o);
  if (!write_report(o.report, o, g.in, g.slots, out)) die("cannot write the report");
  return 0;
}
