// The timer's host side that needs no GPU: options, input files, the records it keeps and the
// report it writes (the judge reads it with worker/harness/timer_report.py). Text that came from
// the runner is escaped to printable ASCII before it goes into the report.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "timer_plan.cuh"

namespace fjt {

struct Options {
  const char* listen = nullptr;  // path of the socket to listen on, or
  int fd = -1;                   // an inherited connected socket
  const char* input = nullptr;   // the test's input (its output goes to out1)
  const char* fresh = nullptr;   // the judge's fresh input of the same shape (output to out2)
  const char* out1 = nullptr;
  const char* out2 = nullptr;
  const char* report = nullptr;
  double limit_s = 10;           // the test's time limit per call
  double budget_s = 1;           // time for the timed batches
  double target_s = 0.02;        // length of a full batch
  double max_pool_gb = 6;        // GPU memory for the shared slots
  int rows = 64;                 // sampled rows checked per call
  bool calibrate = false;        // our own runner on the other side: measure the overhead
};

// Parses `--name value` pairs; returns an error message or "".
inline std::string parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--calibrate") { o.calibrate = true; continue; }
    if (i + 1 >= argc) return "option " + k + " needs a value";
    const char* v = argv[++i];
    if (k == "--listen") o.listen = v;
    else if (k == "--fd") o.fd = std::atoi(v);
    else if (k == "--input") o.input = v;
    else if (k == "--fresh") o.fresh = v;
    else if (k == "--out1") o.out1 = v;
    else if (k == "--out2") o.out2 = v;
    else if (k == "--report") o.report = v;
    else if (k == "--limit") o.limit_s = std::atof(v);
    else if (k == "--budget") o.budget_s = std::atof(v);
    else if (k == "--target-batch") o.target_s = std::atof(v);
    else if (k == "--pool-gb") o.max_pool_gb = std::atof(v);
    else if (k == "--rows") o.rows = std::atoi(v);
    else return "unknown option " + k;
  }
  if (!o.listen && o.fd < 0) return "--listen PATH or --fd N is required";
  if (!o.input || !o.report) return "--input and --report are required";
  if (!o.calibrate && (!o.fresh || !o.out1 || !o.out2)) return "--fresh, --out1, --out2 needed";
  if (o.rows < 1 || o.rows > 1024) return "--rows must be 1..1024";
  return "";
}

struct HostInput {
  int B = 0, N = 0, d = 0;
  size_t elements = 0;         // B*N*d
  std::vector<float> q, k, v;  // each B*N*d, batch after batch
};

// The homework's input file (int32 B, N, d, then Q, K, V per batch); "" or why it is unusable.
inline std::string read_input(const char* path, HostInput& in) {
  FILE* f = std::fopen(path, "rb");
  if (!f) return std::string("cannot open input ") + path;
  int32_t hdr[3];
  bool ok = std::fread(hdr, sizeof(int32_t), 3, f) == 3 && hdr[0] > 0 && hdr[1] > 0 && hdr[2] > 0;
  if (ok) {
    in.B = hdr[0], in.N = hdr[1], in.d = hdr[2];
    size_t nd = (size_t)in.N * in.d;
    in.elements = (size_t)in.B * nd;
    in.q.resize(in.elements), in.k.resize(in.elements), in.v.resize(in.elements);
    for (int b = 0; ok && b < in.B; ++b) {
      size_t off = (size_t)b * nd;
      ok = std::fread(in.q.data() + off, sizeof(float), nd, f) == nd &&
           std::fread(in.k.data() + off, sizeof(float), nd, f) == nd &&
           std::fread(in.v.data() + off, sizeof(float), nd, f) == nd;
    }
  }
  std::fclose(f);
  return ok ? "" : std::string("bad or short input ") + path;
}

struct CallRecord {
  Input input = Input::Random;      // what the call ran on
  uint32_t slot = 0;                // where
  unsigned long long nonfinite = 0; // outputs NaN/inf (or never written) at the end of the batch
  unsigned long long changed = 0;   // input values that differed from T's copy after the batch
  float sampled_error = 0;          // max |output - reference| over the sampled rows
  float repeat_diff = -1;           // official again: max |output - first output| (-1: n/a)
};

struct BatchRecord {
  uint32_t index = 0;
  Role role = Role::Probe;
  std::vector<CallRecord> calls;
  double reply_s = 0;            // T's clock: RUN sent -> DONE received
  double bracket_s = 0;          // T's clock: RUN sent -> end-of-batch scan finished
  float flush_ms = 0;            // T's L2 flush before the batch, timed by T (GPU busy: longer)
  bool replied = false;          // a DONE (valid or not) came back
  int runner_ok = 1;             // the DONE's own status
  std::string protocol = "ok";   // or the violation seen
  std::string text;              // the runner's error line, when it sent one
  std::vector<float> events_ms;  // S's claims, when its DONE was well formed
};

struct Outcome {
  bool too_slow = false;          // a batch ran past its deadline or a call past the limit
  std::string runner = "ok";      // "ok", or what went wrong on the runner's side
  std::vector<BatchRecord> batches;
};

inline std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 300)) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c >= 32 && c < 127) out += c;
    else out += '?';
  }
  return out;
}

inline void put_float(FILE* f, double x) {
  if (std::isnan(x)) std::fputs("NaN", f);
  else if (std::isinf(x)) std::fputs(x > 0 ? "Infinity" : "-Infinity", f);
  else std::fprintf(f, "%.9g", x);
}

template <typename T, typename F>
inline void put_list(FILE* f, const char* key, const std::vector<T>& items, F value) {
  std::fprintf(f, ", \"%s\": [", key);
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) std::fputs(", ", f);
    value(items[i]);
  }
  std::fputs("]", f);
}

inline void put_batch(FILE* f, const BatchRecord& b) {
  std::fprintf(f, "{\"index\": %u, \"role\": \"%s\", \"calls\": %zu, \"replied\": %s, ", b.index,
               role_name(b.role), b.calls.size(), b.replied ? "true" : "false");
  std::fputs("\"reply_s\": ", f), put_float(f, b.reply_s);
  std::fputs(", \"bracket_s\": ", f), put_float(f, b.bracket_s);
  std::fputs(", \"flush_ms\": ", f), put_float(f, b.flush_ms);
  std::fprintf(f, ", \"runner_ok\": %s, \"protocol\": \"%s\", \"text\": \"%s\"",
               b.runner_ok ? "true" : "false", escaped(b.protocol).c_str(),
               escaped(b.text).c_str());
  put_list(f, "events_ms", b.events_ms, [&](float x) { put_float(f, x); });
  put_list(f, "inputs", b.calls, [&](const CallRecord& c) {
    std::fprintf(f, "\"%s\"", input_name(c.input)); });
  put_list(f, "nonfinite", b.calls, [&](const CallRecord& c) { std::fprintf(f, "%llu", c.nonfinite); });
  put_list(f, "inputs_changed", b.calls, [&](const CallRecord& c) {
    std::fprintf(f, "%llu", c.changed); });
  put_list(f, "sampled_error", b.calls, [&](const CallRecord& c) { put_float(f, c.sampled_error); });
  put_list(f, "repeat_diff", b.calls, [&](const CallRecord& c) { put_float(f, c.repeat_diff); });
  std::fputs("}", f);
}

// The report; false when it could not be written.
inline bool write_report(const char* path, const Options& o, const HostInput& in, uint32_t slots,
                         const Outcome& out) {
  FILE* f = std::fopen(path, "w");
  if (!f) return false;
  std::fprintf(f, "{\"version\": 1, \"mode\": \"%s\", \"B\": %d, \"N\": %d, \"d\": %d, "
               "\"slots\": %u, \"rows_per_call\": %d, \"too_slow\": %s, \"runner\": \"%s\", "
               "\"batches\": [\n", o.calibrate ? "calibrate" : "judge", in.B, in.N, in.d, slots,
               o.rows, out.too_slow ? "true" : "false", escaped(out.runner).c_str());
  for (size_t i = 0; i < out.batches.size(); ++i) {
    if (i) std::fputs(",\n", f);
    put_batch(f, out.batches[i]);
  }
  std::fputs("\n]}\n", f);
  return std::fclose(f) == 0;
}

}  // namespace fjt
