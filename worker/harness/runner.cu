// flashjudge-runner: the student's side (S) of a timed cuda-kernel run.
//
//   flashjudge-runner (--connect SOCKET | --fd N) (LIBRARY | --builtin)
//
// Maps the timer's shared GPU memory (see shared_pool.cuh), loads the student's library, then runs
// what the timer asks: for RUN batch j on slots a, b, ... it calls solve() on each slot back to
// back and answers DONE with the CUDA-event time of each call. Each call is timed as the old
// in-process harness timed it: an L2 flush (a memset over twice the L2) just before the start
// event, so the call starts cold and its launch overlaps the flush, then the start event, solve(),
// a mark event, a device-wide synchronize, the stop event; less the runner's own end of a call
// (the host waking from that wait to record the stop event, ~6 us on an H100), measured on empty
// calls before the library is loaded and never taking a call below start-to-mark: the Python
// runner (triton_runner.py, `call_ms`) takes off its own the same way, so a CUDA kernel and a
// Triton one doing the same GPU work read the same on one board.
//
// Nothing this process says is trusted: the student's code shares it and may rewrite anything
// here. The timer measures each batch itself and checks every output; the event times are
// accepted only when they agree with its wall clock. `--builtin zero` replaces the library by our
// own memset (the calibration of this worker's overhead, where every byte of the process is ours).
// A watchdog thread ends the process when the timer hangs up, so a solve() stuck in a loop does
// not hold the GPU once the timer has given up on it.
// Exit codes: 0 after QUIT or the timer hanging up, 2 our own set-up failed (before the library
// was loaded), 3 the library would not load, 4 a CUDA error once it was loaded.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "protocol.cuh"
#include "shared_pool.cuh"

typedef void (*SolveFn)(const float*, const float*, const float*, float*, int, int, int);

static const int EXIT_SETUP = 2, EXIT_LIBRARY = 3, EXIT_SOLVE = 4;
static const int HELLO_TIMEOUT_MS = 60000;
static const int CONNECT_TRIES = 1500;  // x 20 ms while the timer's socket does not exist yet
static const int REFUSED_TRIES = 50;    // x 20 ms once it exists (between its bind and listen)

static void empty_solve(const float*, const float*, const float*, float*, int, int, int) {}

static void zero_solve(const float*, const float*, const float*, float* O, int B, int N, int d) {
  cudaMemsetAsync(O, 0, (size_t)B * N * d * sizeof(float), 0);
}

static void say(int sock, bool ok, const std::string& text) {
  fjt::Ready r = fjt::make<fjt::Ready>(fjt::Kind::Ready);
  r.ok = ok ? 1 : 0;
  std::snprintf(r.text, sizeof(r.text), "%s", text.c_str());
  fjt::send_msg(sock, &r, sizeof(r));
}

[[noreturn]] static void fail(int sock, int code, const std::string& what) {
  std::fprintf(stderr, "flashjudge-runner: %s\n", what.c_str());
  if (sock >= 0) say(sock, false, what);
  std::fflush(stderr);
  _exit(code);
}

struct Pool {
  fjt::Hello hello;
  char* base = nullptr;
  void* flush = nullptr;  // twice the L2, written before every call
  size_t flush_bytes = 0;
  float* tensor(uint32_t slot, int which) const {
    return reinterpret_cast<float*>(base + slot * hello.slot_stride + which * hello.tensor_stride);
  }
};

static int open_channel(int argc, char** argv) {
  if (argc != 4) fail(-1, EXIT_SETUP, "usage: flashjudge-runner (--connect PATH | --fd N) LIB");
  if (std::strcmp(argv[1], "--fd") == 0) return std::atoi(argv[2]);
  if (std::strcmp(argv[1], "--connect") != 0) fail(-1, EXIT_SETUP, "--connect or --fd expected");
  int sock = -ENOENT, refused = 0;
  for (int i = 0; i < CONNECT_TRIES && refused < REFUSED_TRIES; ++i) {
    sock = fjt::connect_to(argv[2]);
    if (sock >= 0 || (sock != -ENOENT && sock != -ECONNREFUSED)) break;
    refused += sock == -ECONNREFUSED;
    usleep(20000);
  }
  if (sock < 0) fail(-1, EXIT_SETUP, std::string("cannot connect: ") + std::strerror(-sock));
  return sock;
}

// Ends the process once the timer has hung up (it waits without reading the channel).
static void watchdog(int sock) {
  std::thread([sock] {
    for (;;) {
      pollfd p{sock, POLLRDHUP, 0};
      if (poll(&p, 1, -1) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) _exit(0);
    }
  }).detach();
}

static Pool map_pool(int sock) {
  Pool pool;
  int fd = -1;
  long n = fjt::recv_msg(sock, &pool.hello, sizeof(pool.hello), HELLO_TIMEOUT_MS, &fd);
  const fjt::Hello& h = pool.hello;
  if (n != (long)sizeof(h) || h.h.magic != fjt::kMagic || fd < 0 || h.slots == 0)
    fail(sock, EXIT_SETUP, "no valid HELLO from the timer");
  if (cudaFree(0) != cudaSuccess) fail(sock, EXIT_SETUP, "no usable CUDA device");
  fjt::DriverApi api;
  std::string err;
  CUdeviceptr ptr = 0;
  if (!fjt::load_driver(api, err) || !fjt::import_pool(api, 0, fd, h.pool_bytes, &ptr, err))
    fail(sock, EXIT_SETUP, "cannot map the timer's memory: " + err);
  close(fd);
  pool.base = reinterpret_cast<char*>(ptr);
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  pool.flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : (64 << 20));
  if (cudaMalloc(&pool.flush, pool.flush_bytes) != cudaSuccess)
    fail(sock, EXIT_SETUP, "cannot allocate the L2 flush buffer");
  return pool;
}

static SolveFn load_solve(int sock, const char* lib) {
  if (std::strcmp(lib, "--builtin") == 0) return zero_solve;
  void* handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!handle) fail(sock, EXIT_LIBRARY, std::string("cannot load the library: ") + dlerror());
  SolveFn fn = (SolveFn)dlsym(handle, "solve");
  if (!fn) fail(sock, EXIT_LIBRARY, "the library does not export solve() (extern \"C\" missing?)");
  return fn;
}

struct CallEvents {
  cudaEvent_t start, mark, stop;
};

// One call: L2 flushed, then events around solve() and a device-wide synchronize; milliseconds,
// less `tail_ms` (the wait's own end), never less than start to the mark behind solve()'s last
// launch on stream 0. Work left on another stream keeps the wait, hence the stop event, waiting:
// it counts in full.
static cudaError_t timed_call(SolveFn solve, const Pool& pool, uint32_t slot, CallEvents ev,
                              float tail_ms, float* ms) {
  const fjt::Hello& h = pool.hello;
  cudaError_t e = cudaMemsetAsync(pool.flush, slot & 0xFF, pool.flush_bytes, 0);
  if (e != cudaSuccess) return e;
  if ((e = cudaEventRecord(ev.start, 0)) != cudaSuccess) return e;
  solve(pool.tensor(slot, 0), pool.tensor(slot, 1), pool.tensor(slot, 2), pool.tensor(slot, 3),
        h.B, h.N, h.d);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  if ((e = cudaEventRecord(ev.mark, 0)) != cudaSuccess) return e;
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) return e;
  if ((e = cudaEventRecord(ev.stop, 0)) != cudaSuccess) return e;
  if ((e = cudaEventSynchronize(ev.stop)) != cudaSuccess) return e;
  float full = 0, floor = 0;
  if ((e = cudaEventElapsedTime(&full, ev.start, ev.stop)) != cudaSuccess) return e;
  if ((e = cudaEventElapsedTime(&floor, ev.start, ev.mark)) != cudaSuccess) return e;
  *ms = full - tail_ms > floor ? full - tail_ms : floor;
  return cudaSuccess;
}

static const int TAIL_CALLS = 64;

// The median end of an empty call (flush, start, the wait, stop), before the library is loaded.
static float call_tail_ms(int sock, const Pool& pool, CallEvents ev) {
  float ends[TAIL_CALLS];
  for (int i = 0; i < TAIL_CALLS; ++i)
    if (timed_call(empty_solve, pool, 0, ev, 0.0f, &ends[i]) != cudaSuccess)
      fail(sock, EXIT_SETUP, "cannot time an empty call");
  std::sort(ends, ends + TAIL_CALLS);
  return ends[TAIL_CALLS / 2];
}

// The runner spins while it waits for RUN (T's work between batches takes milliseconds), so T's
// bracket does not hold the time a blocked thread takes to be woken on a virtual machine.
constexpr long kSpinForRunUs = 100000;

static CallEvents make_events(int sock) {
  CallEvents ev;
  if (cudaEventCreate(&ev.start) != cudaSuccess || cudaEventCreate(&ev.mark) != cudaSuccess ||
      cudaEventCreate(&ev.stop) != cudaSuccess)
    fail(sock, EXIT_SETUP, "cudaEventCreate failed");
  return ev;
}

static void serve(int sock, SolveFn solve, const Pool& pool, float tail_ms) {
  CallEvents ev[fjt::kMaxCalls];
  for (uint32_t i = 0; i < fjt::kMaxCalls; ++i) ev[i] = make_events(sock);
  for (;;) {
    fjt::Run run;
    long n = fjt::recv_msg(sock, &run, sizeof(run), -1, nullptr, kSpinForRunUs);
    if (n <= 0 || run.h.kind == static_cast<uint32_t>(fjt::Kind::Quit)) _exit(0);
    if (n != (long)sizeof(run) || run.calls == 0 || run.calls > fjt::kMaxCalls) _exit(0);
    fjt::Done done = fjt::make<fjt::Done>(fjt::Kind::Done);
    done.batch = run.batch, done.calls = run.calls, done.ok = 1;
    for (uint32_t i = 0; i < run.calls && done.ok; ++i) {
      uint32_t slot = run.slot[i] < pool.hello.slots ? run.slot[i] : 0;
      cudaError_t e = timed_call(solve, pool, slot, ev[i], tail_ms, &done.event_ms[i]);
      if (e != cudaSuccess) {
        done.ok = 0;
        std::snprintf(done.text, sizeof(done.text), "solve(): %s", cudaGetErrorString(e));
      }
    }
    fjt::send_msg(sock, &done, sizeof(done));
    if (!done.ok) fail(-1, EXIT_SOLVE, done.text);
  }
}

int main(int argc, char** argv) {
  int sock = open_channel(argc, argv);
  watchdog(sock);
  Pool pool = map_pool(sock);
  float tail_ms = call_tail_ms(sock, pool, make_events(sock));  // before any student code loads
  SolveFn solve = load_solve(sock, argv[3]);
  say(sock, true, "ready");
  serve(sock, solve, pool, tail_ms);
}
