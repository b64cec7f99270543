// One batch of the timer (included by timer.cu after Gpu is defined): prepare, then each call's
// turn (its inputs written, RUN, DONE, its output scanned), then check.
#pragma once

struct Sources {
  float* in[kMaxCalls][3];  // where the reference reads each call's Q, K, V (T's private copy)
  uint64_t seed[kMaxCalls][3];  // a random input's secret seed (its slot gets the same values)
};

// Before the batch: each call's inputs in T's private memory only (S's slots get them at the
// call's turn), the counters zeroed, persisting L2 lines reset and L2 emptied (timed: busy GPU).
static Sources prepare(Gpu& g, BatchRecord& b) {
  Sources src = {};
  uint32_t base = (uint32_t)(secret() % g.slots);
  for (uint32_t i = 0; i < b.calls.size(); ++i) {
    CallRecord& c = b.calls[i];
    c.slot = (base + i) % g.slots;
    for (int t = 0; t < 3; ++t) {
      src.in[i][t] = c.input == Input::Official ? g.official[t]
                     : c.input == Input::Fresh  ? g.fresh[t]
                                                : g.priv[c.slot * 3 + t];
      if (c.input != Input::Random) continue;
      src.seed[i][t] = secret();  // unpredictable
      gen_uniform<<<1024, 256, 0, g.stream>>>(src.in[i][t], g.n, src.seed[i][t]);
    }
  }
  check(cudaMemsetAsync(g.nonfinite, 0, kMaxCalls * 8, g.stream), "zero");
  check(cudaMemsetAsync(g.changed, 0, kMaxCalls * 8, g.stream), "zero");
  check(cudaMemsetAsync(g.diff_bits, 0, 4, g.stream), "zero");
  check(cudaGetLastError(), "launch");
  check(cudaStreamSynchronize(g.stream), "prepare");
  if (cudaCtxResetPersistingL2Cache() != cudaSuccess) cudaGetLastError();  // best effort
  check(cudaEventRecord(g.ev0, g.stream), "event");
  check(cudaMemsetAsync(g.flush, (int)(secret() & 0xFF), g.flush_bytes, g.stream), "flush L2");
  check(cudaEventRecord(g.ev1, g.stream), "event");
  check(cudaStreamSynchronize(g.stream), "flush L2");
  check(cudaEventElapsedTime(&b.flush_ms, g.ev0, g.ev1), "flush time");
  return src;
}

// Call i's turn begins (on T's clock): its output poisoned with NaN, then its inputs written into
// its slot. Until now they did not exist where S can read them, so no earlier call could work on
// them, and nothing written into this output before its turn survives.
static void stage(Gpu& g, const BatchRecord& b, const Sources& src, uint32_t i) {
  uint32_t slot = b.calls[i].slot;
  check(cudaMemsetAsync(g.slot_tensor(slot, 3), 0xFF, g.bytes, g.stream), "poison");
  for (int t = 0; t < 3; ++t) {
    float* dst = g.slot_tensor(slot, t);
    if (b.calls[i].input == Input::Random)
      gen_uniform<<<1024, 256, 0, g.stream>>>(dst, g.n, src.seed[i][t]);  // T's copy's values
    else
      check(cudaMemcpyAsync(dst, src.in[i][t], g.bytes, cudaMemcpyDeviceToDevice, g.stream),
            "stage");
  }
  check(cudaGetLastError(), "launch");
}

// Call i's turn ends (on T's clock) right after its DONE: its sampled rows copied, its output kept
// when the judge wants it, every value scanned for NaN, all before the next call's inputs exist.
static void scan(Gpu& g, const BatchRecord& b, uint32_t i, uint64_t row_seed) {
  const CallRecord& c = b.calls[i];
  const float* out = g.slot_tensor(c.slot, 3);
  snapshot_rows<<<g.rows, 128, 0, g.stream>>>(out, g.snap, g.rows, g.in.d,
                                               (uint64_t)g.in.B * g.in.N, row_seed, i);
  float* keep = c.input == Input::Fresh ? g.keep2 : c.input == Input::Official ? g.keep1 : nullptr;
  if (c.input == Input::Official && g.have1) keep = g.keep_rep;
  if (keep)
    check(cudaMemcpyAsync(keep, out, g.bytes, cudaMemcpyDeviceToDevice, g.stream), "keep output");
  count_nonfinite<<<512, 256, 0, g.stream>>>(out, g.n, g.nonfinite + i);
  check(cudaGetLastError(), "launch");
}

// Outside the bracket: exact answers of the sampled rows, inputs untouched, repeat consistent.
static void verify_batch(Gpu& g, BatchRecord& b, const Sources& src, uint64_t row_seed) {
  size_t calls = b.calls.size();
  RefArgs a = {};
  for (size_t i = 0; i < calls; ++i)
    a.q.p[i] = src.in[i][0], a.k.p[i] = src.in[i][1], a.v.p[i] = src.in[i][2];
  a.snap = g.snap, a.err = g.err, a.R = g.rows, a.N = g.in.N, a.d = g.in.d;
  a.rows = (uint64_t)g.in.B * g.in.N, a.seed = row_seed;
  reference_rows<<<dim3(g.rows, (unsigned)calls), kRefThreads, 0, g.stream>>>(a);
  for (size_t i = 0; i < calls; ++i)
    for (int t = 0; t < 3; ++t)
      count_changed<<<256, 256, 0, g.stream>>>(g.slot_tensor(b.calls[i].slot, t), src.in[i][t],
                                               g.n, g.changed + i);
  bool repeat = false;
  for (auto& c : b.calls) repeat |= c.input == Input::Official && g.have1;
  if (repeat) max_abs_diff<<<256, 256, 0, g.stream>>>(g.keep_rep, g.keep1, g.n, g.diff_bits);
  std::vector<float> err(calls * g.rows);
  std::vector<unsigned long long> bad(calls), changed(calls);
  unsigned bits = 0;
  check(cudaMemcpyAsync(err.data(), g.err, err.size() * 4, cudaMemcpyDeviceToHost, g.stream), "d");
  check(cudaMemcpyAsync(bad.data(), g.nonfinite, calls * 8, cudaMemcpyDeviceToHost, g.stream), "d");
  check(cudaMemcpyAsync(changed.data(), g.changed, calls * 8, cudaMemcpyDeviceToHost, g.stream),
        "d");
  check(cudaMemcpyAsync(&bits, g.diff_bits, 4, cudaMemcpyDeviceToHost, g.stream), "d");
  check(cudaGetLastError(), "launch");
  check(cudaStreamSynchronize(g.stream), "verify batch");
  for (size_t i = 0; i < calls; ++i) {
    CallRecord& c = b.calls[i];
    c.nonfinite = bad[i], c.changed = changed[i];
    for (int k = 0; k < g.rows; ++k) c.sampled_error = std::max(c.sampled_error, err[i * g.rows + k]);
    if (c.input == Input::Official && g.have1) { float f; memcpy(&f, &bits, 4); c.repeat_diff = f; }
  }
  for (auto& c : b.calls) g.have1 |= c.input == Input::Official, g.have2 |= c.input == Input::Fresh;
}

// Drains messages that arrived out of turn; returns a description, or "" when there were none.
static std::string out_of_turn(int sock) {
  int count = 0;
  char junk[sizeof(Done) + 64];
  while (pending(sock) && count < 1000)
    if (recv_msg(sock, junk, sizeof(junk), 0) <= 0) break; else ++count;
  return count ? std::to_string(count) + " message(s) arrived out of turn" : "";
}

// T spins while it waits for DONE (a call is usually well under a second; a long one blocks
// after this), so its clock stops when the reply arrives, not when the host gets round to waking it.
constexpr long kSpinForDoneUs = 250000;

enum class Answer { Next, Last, None };  // go on; the call answered but the batch stops; no answer

// RUN for call i alone (its inputs are in its slot now), then its DONE; S's claimed time is kept.
static Answer ask(int sock, Gpu& g, BatchRecord& b, uint32_t i, const Options& o, Outcome& out) {
  std::string early = out_of_turn(sock);
  if (!early.empty()) b.protocol = early;
  Run run = make<Run>(Kind::Run);
  run.batch = g.requests++, run.calls = 1, run.slot[0] = b.calls[i].slot;
  int deadline_ms = (int)std::min(3.6e6, 1000 * (1.5 * o.limit_s + 2));
  double t0 = now_s();
  if (send_msg(sock, &run, sizeof(run)) != 0) return out.runner = "the runner hung up", Answer::None;
  Done done;
  long n = recv_msg(sock, &done, sizeof(done), deadline_ms, nullptr, kSpinForDoneUs);
  b.reply_s += now_s() - t0;
  if (n == -ETIMEDOUT) return out.too_slow = true, Answer::None;
  if (n <= 0) return out.runner = "the runner ended during a batch", Answer::None;
  if (const char* why = check_done(done, n, run.batch, run.calls)) {
    b.protocol = why;
    b.events_ms.push_back(NAN);  // no claim for this call
    return Answer::Next;
  }
  b.events_ms.push_back(done.event_ms[0]);
  if (done.ok) return Answer::Next;
  done.text[kTextBytes - 1] = 0;
  b.runner_ok = 0, b.text = done.text;
  out.runner = std::string("solve() failed: ") + done.text;
  return Answer::Last;
}

// The batch on T's clock, one call at a time: each call's inputs written, RUN, DONE, its output
// scanned; the bracket runs from the first call's inputs to the last call's scan, so everything
// S does once any of the batch's inputs exist is inside it. The scan of call i and the inputs of
// call i+1 share one synchronize; RUN i+1 leaves only once both are done. The calls that answered
// stay in `b`; false when the run cannot go on (recorded in `out`).
static bool bracket(int sock, Gpu& g, BatchRecord& b, const Sources& src, const Options& o,
                    Outcome& out, uint64_t row_seed) {
  Answer a = Answer::Next;
  uint32_t answered = 0;
  double t0 = now_s();
  for (uint32_t i = 0; i < b.calls.size() && a == Answer::Next; ++i) {
    stage(g, b, src, i);
    check(cudaStreamSynchronize(g.stream), "stage");
    a = ask(sock, g, b, i, o, out);
    if (a != Answer::None) scan(g, b, i, row_seed), answered = i + 1;
  }
  check(cudaStreamSynchronize(g.stream), "end-of-call scan");
  b.bracket_s = now_s() - t0;
  b.calls.resize(answered);
  b.replied = answered > 0;
  return a == Answer::Next;
}

static bool one_batch(int sock, Gpu& g, BatchRecord& b, const Options& o, Outcome& out) {
  Sources src = prepare(g, b);
  uint64_t row_seed = secret();  // T's alone: S cannot know which rows count
  bool go_on = bracket(sock, g, b, src, o, out, row_seed);
  if (b.replied) verify_batch(g, b, src, row_seed);
  out.batches.push_back(b);
  return go_on;
}

static BatchRecord batch_of(uint32_t index, Role role, uint32_t calls, const Plan& plan) {
  BatchRecord b;
  b.index = index, b.role = role;
  b.calls.resize(calls);
  for (uint32_t i = 0; i < calls; ++i)
    b.calls[i].input = role == Role::Calibration ? Input::Random : input_of(index, i, calls, plan);
  return b;
}

static void run_batches(int sock, Gpu& g, const Options& o, Outcome& out) {
  Plan plan = make_plan(secret(), secret(), secret());
  std::vector<uint32_t> cal = calibration_calls(g.slots, 4);
  std::vector<double> timed;
  uint32_t full = 1;
  double began = 0;
  for (uint32_t j = 0;; ++j) {
    Role role = o.calibrate ? Role::Calibration : role_of(j, plan);
    uint32_t calls = o.calibrate ? cal[j] : j < kProbes ? 1 : full;
    BatchRecord b = batch_of(j, role, calls, plan);
    if (role == Role::Timed && timed.empty()) began = now_s();
    if (!one_batch(sock, g, b, o, out)) return;
    double per_call = b.bracket_s / calls;
    if (o.calibrate) { if (j + 1 == cal.size()) return; continue; }
    if (per_call > o.limit_s) return void(out.too_slow = true);
    if (j == kProbes - 1) full = calls_for(per_call, o.target_s, g.slots);
    if (role == Role::Timed) timed.push_back(per_call);
    if (role == Role::Timed && enough(timed, now_s() - began, o.budget_s)) return;
  }
}

static void save(const char* path, const float* d_out, size_t n) {
  std::vector<float> host(n);
  check(cudaMemcpy(host.data(), d_out, n * 4, cudaMemcpyDeviceToHost), "download output");
  FILE* f = std::fopen(path, "wb");
  if (!f || std::fwrite(host.data(), 4, n, f) != n || std::fclose(f) != 0)
    die(std::string("cannot write ") + path);
}

// The first output of the test's input and the output of the fresh input, for the judge.
static void save_outputs(const Gpu& g, const Options& o) {
  if (g.have1) save(o.out1, g.keep1, g.n);
  if (g.have2) save(o.out2, g.keep2, g.n);
}
