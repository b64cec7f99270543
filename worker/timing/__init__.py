"""Timing a submission so a rank can rest on it: repeated runs, a robust statistic, its noise band.

stats:    the per-test statistic (lower median) and its band, the total's band.
gpustate: the GPU's clocks, temperature, power and throttle reasons through NVML (None without it).
policy:   after the verdict pass, where to spend a bounded number of extra runs.
"""
