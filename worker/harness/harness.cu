// flashjudge cuda-kernel harness: loads a student's solve() from a shared library and times it.
//
//   harness LIB INPUT1 INPUT2 OUTPUT1 OUTPUT2 TIMING_JSON TIME_LIMIT_S BUDGET_S TOLERANCE
//
// INPUT1 is the test's input, INPUT2 a fresh input of the same shape (another seed) whose expected
// output only the judge knows, so an answer cached from an earlier call fails. The harness sets up
// everything it needs (files read, device buffers allocated) before it loads the student's library,
// so a failure of its own (exit 2) is told apart from the student's (exit 3: the library would not
// load, exit 4: anything failed once it was loaded -- the student's code shares this process and can
// break anything in it, so nothing after that point is blamed on the judge). Then: one warm-up call; timed calls with CUDA events until the standard error is
// under 1% of the mean or BUDGET_S is spent (at least 3, at most 100); before each timed call the L2
// cache is flushed (a memset over twice its size) and O is poisoned with NaN; every second call in
// four runs on INPUT2, copied into the same device buffers; every output is checked on the device
// against the first output of its input (NaN or a difference over TOLERANCE = inconsistent).
// Outputs: OUTPUT1/OUTPUT2 (first outputs of each input) and TIMING_JSON.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

typedef void (*SolveFn)(const float*, const float*, const float*, float*, int, int, int);

static const int EXIT_SETUP = 2;    // our failure: the judge reports SE
static const int EXIT_LIBRARY = 3;  // the student's library would not load
static const int EXIT_SOLVE = 4;    // anything failed once the library was loaded
static const int MIN_RUNS = 3;
static const int MAX_RUNS = 100;

static bool g_loaded = false;  // the student's library is loaded: failures are theirs from now

static void fail(int code, const std::string& what) {
  fprintf(stderr, "flashjudge-harness: %s\n", what.c_str());
  exit(code == EXIT_SETUP && g_loaded ? EXIT_SOLVE : code);
}

static void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  std::string msg = std::string(what) + ": " + cudaGetErrorString(err);
  fail(g_loaded ? EXIT_SOLVE : EXIT_SETUP, msg);
}

struct HostInput {
  int B = 0, N = 0, d = 0;
  size_t elements = 0;        // B*N*d
  std::vector<float> q, k, v;  // each B*N*d, batch after batch (de-interleaved from the file)
};

static HostInput read_input(const char* path) {
  HostInput in;
  FILE* f = fopen(path, "rb");
  if (!f) fail(EXIT_SETUP, std::string("cannot open input ") + path);
  int32_t header[3];
  if (fread(header, sizeof(int32_t), 3, f) != 3) fail(EXIT_SETUP, "short input header");
  in.B = header[0], in.N = header[1], in.d = header[2];
  if (in.B <= 0 || in.N <= 0 || in.d <= 0) fail(EXIT_SETUP, "bad input header");
  size_t nd = (size_t)in.N * in.d;
  in.elements = (size_t)in.B * nd;
  in.q.resize(in.elements), in.k.resize(in.elements), in.v.resize(in.elements);
  for (int b = 0; b < in.B; ++b) {
    size_t off = (size_t)b * nd;
    bool ok = fread(in.q.data() + off, sizeof(float), nd, f) == nd &&
              fread(in.k.data() + off, sizeof(float), nd, f) == nd &&
              fread(in.v.data() + off, sizeof(float), nd, f) == nd;
    if (!ok) fail(EXIT_SETUP, std::string("short input ") + path);
  }
  fclose(f);
  return in;
}

struct DeviceSet {
  float *q = nullptr, *k = nullptr, *v = nullptr;
};

static DeviceSet device_alloc(size_t elements) {
  DeviceSet s;
  check(cudaMalloc(&s.q, elements * sizeof(float)), "cudaMalloc Q");
  check(cudaMalloc(&s.k, elements * sizeof(float)), "cudaMalloc K");
  check(cudaMalloc(&s.v, elements * sizeof(float)), "cudaMalloc V");
  return s;
}

static void upload(const DeviceSet& s, const HostInput& in) {
  size_t bytes = in.elements * sizeof(float);
  check(cudaMemcpy(s.q, in.q.data(), bytes, cudaMemcpyHostToDevice), "upload Q");
  check(cudaMemcpy(s.k, in.k.data(), bytes, cudaMemcpyHostToDevice), "upload K");
  check(cudaMemcpy(s.v, in.v.data(), bytes, cudaMemcpyHostToDevice), "upload V");
}

static void copy_set(const DeviceSet& dst, const DeviceSet& src, size_t elements) {
  size_t bytes = elements * sizeof(float);
  check(cudaMemcpy(dst.q, src.q, bytes, cudaMemcpyDeviceToDevice), "stage Q");
  check(cudaMemcpy(dst.k, src.k, bytes, cudaMemcpyDeviceToDevice), "stage K");
  check(cudaMemcpy(dst.v, src.v, bytes, cudaMemcpyDeviceToDevice), "stage V");
}

// Counts values of `out` that are NaN or differ from `ref` by more than `tol`.
__global__ void count_bad(const float* out, const float* ref, size_t n, float tol,
                          unsigned long long* bad) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    float diff = fabsf(out[i] - ref[i]);
    if (!(diff <= tol)) ++local;  // NaN compares false
  }
  if (local) atomicAdd(bad, local);
}

struct Checker {
  unsigned long long* d_bad = nullptr;
  float tol = 5e-3f;
  unsigned long long count(const float* out, const float* ref, size_t n) {
    check(cudaMemset(d_bad, 0, sizeof(*d_bad)), "reset check counter");
    count_bad<<<1024, 256>>>(out, ref, n, tol, d_bad);
    check(cudaGetLastError(), "launch check kernel");
    unsigned long long bad = 0;
    check(cudaMemcpy(&bad, d_bad, sizeof(bad), cudaMemcpyDeviceToHost), "read check counter");
    return bad;
  }
};

static void write_output(const char* path, const float* d_out, size_t elements) {
  std::vector<float> host(elements);
  check(cudaMemcpy(host.data(), d_out, elements * sizeof(float), cudaMemcpyDeviceToHost),
        "download output");
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(host.data(), sizeof(float), elements, f) != elements || fclose(f) != 0)
    fail(EXIT_SETUP, std::string("cannot write ") + path);
}

struct Stats {
  std::vector<double> times;  // seconds per timed call
  int fresh_calls = 0;
  unsigned long long inconsistent_runs = 0;
  double warmup_s = 0;
  bool too_slow = false;
  double mean() const {
    double s = 0;
    for (double t : times) s += t;
    return times.empty() ? 0 : s / times.size();
  }
  double stddev() const {
    if (times.size() < 2) return 0;
    double m = mean(), s = 0;
    for (double t : times) s += (t - m) * (t - m);
    return std::sqrt(s / (times.size() - 1));
  }
  double min() const {
    double m = times.empty() ? 0 : times[0];
    for (double t : times) m = t < m ? t : m;
    return m;
  }
  bool stable() const {
    if ((int)times.size() < MIN_RUNS) return false;
    return stddev() / std::sqrt((double)times.size()) < 0.01 * mean();
  }
};

static void write_json(const char* path, const Stats& st) {
  FILE* f = fopen(path, "w");
  if (!f) fail(EXIT_SETUP, std::string("cannot write ") + path);
  fprintf(f,
          "{\"runs\": %zu, \"mean_s\": %.9g, \"std_s\": %.9g, \"min_s\": %.9g, "
          "\"warmup_s\": %.9g, \"fresh_calls\": %d, \"inconsistent_runs\": %llu, "
          "\"too_slow\": %s}\n",
          st.times.size(), st.mean(), st.stddev(), st.min(), st.warmup_s, st.fresh_calls,
          st.inconsistent_runs, st.too_slow ? "true" : "false");
  if (fclose(f) != 0) fail(EXIT_SETUP, std::string("cannot write ") + path);
}

struct Bench {
  SolveFn solve;
  HostInput in;
  DeviceSet work, staged1, staged2;
  float *out = nullptr, *ref1 = nullptr, *ref2 = nullptr;
  void* flush = nullptr;
  size_t flush_bytes = 0;
  cudaEvent_t start, stop;
  Checker checker;
  int current = 0;  // which input the work buffers hold (1 or 2)

  void use(int which) {
    if (current == which) return;
    copy_set(work, which == 1 ? staged1 : staged2, in.elements);
    current = which;
  }

  // One call of solve() on input `which`, L2 flushed and O poisoned first; returns seconds.
  // The stop event is recorded after a device-wide synchronize, so work solve() left running on
  // streams of its own is timed too (at the cost of a few microseconds of host latency).
  double call(int which, int salt) {
    use(which);
    check(cudaMemset(out, 0xFF, in.elements * sizeof(float)), "poison O");  // 0xFFFFFFFF is NaN
    check(cudaMemset(flush, salt & 0xFF, flush_bytes), "flush L2");
    check(cudaEventRecord(start), "record start");
    solve(work.q, work.k, work.v, out, in.B, in.N, in.d);
    check(cudaGetLastError(), "solve() launch");
    check(cudaDeviceSynchronize(), "solve()");
    check(cudaEventRecord(stop), "record stop");
    check(cudaEventSynchronize(stop), "wait for stop");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed time");
    return ms / 1000.0;
  }

  // The output of a call against the first output of its input (recorded on first sight).
  void record_or_check(int which, bool& have_ref, Stats& st) {
    float* ref = which == 1 ? ref1 : ref2;
    if (!have_ref) {
      check(cudaMemcpy(ref, out, in.elements * sizeof(float), cudaMemcpyDeviceToDevice), "keep");
      have_ref = true;
    } else if (checker.count(out, ref, in.elements) > 0) {
      st.inconsistent_runs++;
    }
  }
};

static void setup(Bench& b, const char* input1, const char* input2, float tol) {
  b.in = read_input(input1);
  HostInput second = read_input(input2);
  if (second.B != b.in.B || second.N != b.in.N || second.d != b.in.d)
    fail(EXIT_SETUP, "the two inputs differ in shape");
  int device = 0;
  cudaDeviceProp prop;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  b.flush_bytes = 2 * (size_t)(prop.l2CacheSize > 0 ? prop.l2CacheSize : (64 << 20));
  size_t bytes = b.in.elements * sizeof(float);
  b.work = device_alloc(b.in.elements);
  b.staged1 = device_alloc(b.in.elements);
  b.staged2 = device_alloc(b.in.elements);
  upload(b.staged1, b.in);
  upload(b.staged2, second);
  check(cudaMalloc(&b.out, bytes), "cudaMalloc O");
  check(cudaMalloc(&b.ref1, bytes), "cudaMalloc ref1");
  check(cudaMalloc(&b.ref2, bytes), "cudaMalloc ref2");
  check(cudaMalloc(&b.flush, b.flush_bytes), "cudaMalloc L2 flush buffer");
  check(cudaMalloc(&b.checker.d_bad, sizeof(unsigned long long)), "cudaMalloc counter");
  check(cudaEventCreate(&b.start), "cudaEventCreate");
  check(cudaEventCreate(&b.stop), "cudaEventCreate");
  check(cudaDeviceSynchronize(), "setup");
  b.checker.tol = tol;
}

static SolveFn load_solve(const char* lib) {
  void* handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!handle) fail(EXIT_LIBRARY, std::string("cannot load the library: ") + dlerror());
  SolveFn fn = (SolveFn)dlsym(handle, "solve");
  if (!fn) fail(EXIT_LIBRARY, "the library does not export solve() (extern \"C\" missing?)");
  return fn;
}

int main(int argc, char** argv) {
  if (argc != 10) fail(EXIT_SETUP, "usage: harness LIB IN1 IN2 OUT1 OUT2 JSON LIMIT BUDGET TOL");
  double limit_s = atof(argv[7]), budget_s = atof(argv[8]);
  Bench b;
  Stats st;
  setup(b, argv[2], argv[3], (float)atof(argv[9]));
  g_loaded = true;
  b.solve = load_solve(argv[1]);
  bool have1 = false, have2 = false;
  st.warmup_s = b.call(1, 0);
  b.record_or_check(1, have1, st);
  if (st.warmup_s > limit_s) st.too_slow = true;
  auto began = std::chrono::steady_clock::now();
  for (int i = 0; !st.too_slow && i < MAX_RUNS; ++i) {
    int which = (i % 4 == 1) ? 2 : 1;
    double t = b.call(which, i + 1);
    b.record_or_check(which, which == 1 ? have1 : have2, st);
    st.times.push_back(t);
    st.fresh_calls += which == 2;
    double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    if (have2 && (int)st.times.size() >= MIN_RUNS && (st.stable() || spent > budget_s)) break;
    if (t > limit_s) st.too_slow = true;
  }
  write_output(argv[4], b.ref1, b.in.elements);
  if (have2) write_output(argv[5], b.ref2, b.in.elements);
  write_json(argv[6], st);
  _exit(0);  // skip atexit handlers and destructors: the student's code could rewrite files there
}
