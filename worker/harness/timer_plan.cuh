// The timer's plan: which batches run, how many calls each, on which inputs, and when to stop.
// Pure functions (no CUDA, no I/O), so channel_selftest.cpp checks them on any machine.
//
// Batches, in order (S cannot tell a warm-up batch from a timed one; every batch is checked):
//   0          probe: 1 call on the test's own input (its output is the file the judge compares)
//   1          probe: 1 call on a fresh random input (the per-call time that sizes the batches)
//   2          warm-up: full size; one call, at a random position, on the judge's fresh input
//   3          warm-up: full size; one call, at a random position, on the test's input again
//   4 (maybe)  warm-up: full size (the number of warm-ups, 2 or 3, is secret)
//   then       timed: full size, every call on a fresh random input, until the figure is stable
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace fjt {

enum class Role { Probe, Warmup, Timed, Calibration };
enum class Input { Random, Official, Fresh };  // what a call runs on

constexpr uint32_t kProbes = 2;
constexpr uint32_t kMaxTimedBatches = 50;
constexpr uint32_t kMinTimedBatches = 3;
constexpr double kStableRelErr = 0.01;  // stop when the standard error is under 1% of the mean

inline const char* role_name(Role r) {
  switch (r) {
    case Role::Probe: return "probe";
    case Role::Warmup: return "warmup";
    case Role::Timed: return "timed";
    default: return "calibration";
  }
}

inline const char* input_name(Input i) {
  return i == Input::Official ? "official" : i == Input::Fresh ? "fresh" : "random";
}

// Calls per full batch: enough for `target_s` of work at `per_call_s` each, within [1, max_calls].
inline uint32_t calls_for(double per_call_s, double target_s, uint32_t max_calls) {
  if (max_calls < 1) return 1;
  if (!(per_call_s > 0)) return max_calls;
  double want = std::ceil(target_s / per_call_s);
  if (!(want >= 1)) return 1;
  return want >= max_calls ? max_calls : static_cast<uint32_t>(want);
}

struct Plan {
  uint32_t warmups;     // full-size warm-up batches after the probes: 2 or 3
  uint32_t fresh_pos;   // position of the judge's fresh input in batch 2 (mod the batch size)
  uint32_t repeat_pos;  // position of the test's input again in batch 3 (mod the batch size)
};

// The plan drawn from three secret random numbers.
inline Plan make_plan(uint64_t r1, uint64_t r2, uint64_t r3) {
  return Plan{2 + static_cast<uint32_t>(r1 % 2), static_cast<uint32_t>(r2 % 1024),
              static_cast<uint32_t>(r3 % 1024)};
}

inline Role role_of(uint32_t batch, const Plan& p) {
  if (batch < kProbes) return Role::Probe;
  return batch < kProbes + p.warmups ? Role::Warmup : Role::Timed;
}

// What call `pos` of batch `batch` (of `calls` calls) runs on.
inline Input input_of(uint32_t batch, uint32_t pos, uint32_t calls, const Plan& p) {
  if (batch == 0) return Input::Official;
  if (batch == 2 && pos == p.fresh_pos % calls) return Input::Fresh;
  if (batch == 3 && pos == p.repeat_pos % calls) return Input::Official;
  return Input::Random;
}

// Whether the timed batches so far (their per-call times, seconds) are enough: at least
// kMinTimedBatches and either stable or past the budget; or kMaxTimedBatches in any case.
inline bool enough(const std::vector<double>& per_call, double spent_s, double budget_s) {
  size_t n = per_call.size();
  if (n >= kMaxTimedBatches) return true;
  if (n < kMinTimedBatches) return false;
  double mean = 0, var = 0;
  for (double t : per_call) mean += t;
  mean /= n;
  for (double t : per_call) var += (t - mean) * (t - mean);
  double stderr_ = std::sqrt(var / (n - 1) / n);
  return stderr_ < kStableRelErr * mean || spent_s > budget_s;
}

// Calibration batches: call counts 1, 2, 4, ... up to max_calls, `rounds` times over, so the
// overhead can be fitted as fixed + per-call.
inline std::vector<uint32_t> calibration_calls(uint32_t max_calls, int rounds) {
  std::vector<uint32_t> out;
  for (int r = 0; r < rounds; ++r)
    for (uint32_t c = 1; c <= max_calls; c *= 2) out.push_back(c);
  return out;
}

}  // namespace fjt
