// Checks, on any machine (no GPU), the parts of the timer that need none: the channel's framing
// and descriptor passing (protocol.cuh), the plan (timer_plan.cuh) and the report (timer_io.cuh).
//
//   flashjudge-channel-selftest [REPORT_PATH]
//   flashjudge-channel-selftest --listen SOCKET ... (the timer's own options)
//
// Prints one line per failed check and exits 1, or prints "ok" and exits 0. With REPORT_PATH it
// also writes a sample report there, which tests/worker/test_kernel_timer_build.py parses with
// worker/harness/timer_report.py (the C++ writer and the Python reader must agree).
//
// Given the timer's options it stands in for the timer without a GPU: it listens as the timer
// does (listen_at), passes a memfd of the pool's size in HELLO (shape 2 x 4 x 8, 3 slots),
// waits for READY, asks for one RUN, checks its DONE, sends QUIT and writes a report whose runner
// field says how the exchange went (tests/worker/harness/test_triton_runner_protocol.py runs it
// with the runners through run_split, each in its sandbox, as on a GPU node).
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "protocol.cuh"
#include "timer_io.cuh"
#include "timer_plan.cuh"

using namespace fjt;

static int failures = 0;

static void expect(bool ok, const char* what) {
  if (!ok) std::printf("FAILED: %s\n", what), ++failures;
}

static void descriptor_passing(int a, int b) {
  int mem = memfd_create("selftest", 0);
  expect(mem >= 0 && write(mem, "shared", 6) == 6, "memfd");
  Hello h = make<Hello>(Kind::Hello);
  h.slots = 3;
  expect(send_msg(a, &h, sizeof(h), mem) == 0, "send HELLO with a descriptor");
  Hello got;
  int fd = -1;
  expect(recv_msg(b, &got, sizeof(got), 1000, &fd) == (long)sizeof(got), "HELLO size");
  expect(got.slots == 3 && fd >= 0 && fd != mem, "HELLO arrives with a new descriptor");
  char buf[6] = {};
  expect(pread(fd, buf, 6, 0) == 6 && std::memcmp(buf, "shared", 6) == 0,
         "the descriptor reaches the same memory");
  close(fd), close(mem);
}

static void done_checks(int a, int b) {
  Done d = make<Done>(Kind::Done);
  d.batch = 4, d.calls = 2;
  send_msg(a, &d, sizeof(d));
  Done r;
  long n = recv_msg(b, &r, sizeof(r), 1000);
  expect(check_done(r, n, 4, 2) == nullptr, "a right DONE is accepted");
  expect(check_done(r, n, 5, 2) != nullptr, "a DONE for another batch is refused");
  expect(check_done(r, n, 4, 3) != nullptr, "a DONE with other calls is refused");
  send_msg(a, &d, sizeof(d) / 2);
  n = recv_msg(b, &r, sizeof(r), 1000);
  expect(check_done(r, n, 4, 2) != nullptr, "a short DONE is refused");
  char big[sizeof(Done) + 32] = {};
  std::memcpy(big, &d, sizeof(d));
  send_msg(a, big, sizeof(big));
  n = recv_msg(b, &r, sizeof(r), 1000);
  expect(n == (long)sizeof(r) + 1 && check_done(r, n, 4, 2) != nullptr, "a long DONE is refused");
  Ready bad = make<Ready>(Kind::Run);
  expect(check_ready(bad, sizeof(bad)) != nullptr, "a READY of the wrong kind is refused");
}

static void turn_taking(int a, int b) {
  expect(!pending(b), "nothing pending at first");
  Quit q = make<Quit>(Kind::Quit);
  send_msg(a, &q, sizeof(q)), send_msg(a, &q, sizeof(q));
  Quit r;
  recv_msg(b, &r, sizeof(r), 1000);
  expect(pending(b), "a second message out of turn is seen");
  recv_msg(b, &r, sizeof(r), 1000);
  expect(recv_msg(b, &r, sizeof(r), 50) == -ETIMEDOUT, "waiting times out");
  close(a);
  expect(recv_msg(b, &r, sizeof(r), 1000) == 0, "a hang-up reads as end of stream");
}

static void plan_checks() {
  expect(calls_for(0.001, 0.02, 64) == 20, "20 calls of 1 ms fill 20 ms");
  expect(calls_for(0.5, 0.02, 64) == 1, "a slow call gets a batch of its own");
  expect(calls_for(1e-6, 0.02, 8) == 8, "the pool caps the batch");
  expect(calls_for(0, 0.02, 8) == 8, "an unmeasurable call gets the largest batch");
  Plan p = make_plan(1, 5, 7);
  expect(p.warmups == 3 && role_of(4, p) == Role::Warmup && role_of(5, p) == Role::Timed,
         "warm-ups follow the probes");
  expect(role_of(1, p) == Role::Probe, "two probes");
  expect(input_of(0, 0, 1, p) == Input::Official, "the first call runs the test's input");
  expect(input_of(2, 5 % 4, 4, p) == Input::Fresh && input_of(2, 0, 4, p) == Input::Random,
         "the fresh input goes where the plan says");
  expect(input_of(3, 7 % 4, 4, p) == Input::Official, "the test's input comes back in batch 3");
  expect(!enough({1, 1}, 9, 1) && enough({1, 1, 1}, 0, 1), "three stable batches are enough");
  expect(!enough({1, 2, 3}, 0, 1) && enough({1, 2, 3}, 2, 1), "unstable: run until the budget");
  expect(calibration_calls(8, 2).size() == 8, "calibration: 1, 2, 4, 8 twice");
}

static bool sample_report(const char* path) {
  Options o;
  HostInput in;
  in.B = 2, in.N = 64, in.d = 32;
  Outcome out;
  out.runner = "solve() failed: \"quoted\"\n";
  BatchRecord b;
  b.index = 0, b.reply_s = 0.01, b.bracket_s = 0.0125, b.flush_ms = 0.04f, b.replied = true;
  b.calls.resize(2);
  b.calls[0].input = Input::Official, b.calls[0].sampled_error = 1.5e-6f;
  b.calls[1].nonfinite = 7, b.calls[1].sampled_error = std::numeric_limits<float>::infinity();
  b.events_ms = {4.5f, 5.25f};
  b.protocol = "1 message(s) arrived out of turn";
  out.batches.push_back(b);
  return write_report(path, o, in, 16, out);
}

// The runner's side of one exchange, as the timer sees it: "ok" or what went wrong.
static std::string exchange(int sock) {
  if (sock < 0) return "the runner never connected";
  Hello h = make<Hello>(Kind::Hello);
  h.B = 2, h.N = 4, h.d = 8, h.slots = 3;
  h.pool_bytes = 4096, h.slot_stride = 2048, h.tensor_stride = 256;
  int mem = memfd_create("pool", 0);
  if (mem < 0 || ftruncate(mem, static_cast<off_t>(h.pool_bytes)) != 0) return "memfd";
  int sent = send_msg(sock, &h, sizeof(h), mem);
  close(mem);
  if (sent != 0) return "the runner hung up before HELLO";
  Ready r;
  long n = recv_msg(sock, &r, sizeof(r), 60000);
  if (n <= 0) return "the runner ended before it was ready";
  if (const char* why = check_ready(r, n)) return why;
  r.text[kTextBytes - 1] = 0;
  if (!r.ok) return std::string("the runner failed: ") + r.text;
  Run run = make<Run>(Kind::Run);
  run.batch = 0, run.calls = 1, run.slot[0] = 1;
  Done d;
  if (send_msg(sock, &run, sizeof(run)) != 0) return "the runner hung up before RUN";
  n = recv_msg(sock, &d, sizeof(d), 60000);
  if (const char* why = check_done(d, n, 0, 1)) return why;
  Quit q = make<Quit>(Kind::Quit);
  send_msg(sock, &q, sizeof(q));
  return "ok";
}

// Stands in for the timer (see the top): its options, its listening, its report.
static int stand_in_timer(int argc, char** argv) {
  Options o;
  std::string bad = parse_options(argc, argv, o);
  if (!bad.empty()) return std::fprintf(stderr, "%s\n", bad.c_str()), 2;
  int listener = listen_at(o.listen);
  if (listener < 0) return std::fprintf(stderr, "cannot listen: %s\n", std::strerror(-listener)), 2;
  int sock = accept_one(listener, 20000);
  HostInput in;
  in.B = 2, in.N = 4, in.d = 8;
  Outcome out;
  out.runner = exchange(sock);
  if (sock >= 0) close(sock);
  return write_report(o.report, o, in, 3, out) ? 0 : 2;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--listen") == 0) return stand_in_timer(argc, argv);
  int sv[2];
  expect(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0, "socketpair");
  descriptor_passing(sv[0], sv[1]);
  done_checks(sv[0], sv[1]);
  turn_taking(sv[0], sv[1]);
  plan_checks();
  if (argc > 1) expect(sample_report(argv[1]), "write the sample report");
  if (failures == 0) std::printf("ok\n");
  return failures ? 1 : 0;
}
