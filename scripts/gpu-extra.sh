#!/usr/bin/env sh
# Which optional extra `make` installs on this machine: ",gpu" where nvidia-smi lists a GPU (CuPy for
# CUDA 12 drivers, the course's cupy-cuda12x), ",gpu13" where the driver is CUDA 13 or newer
# (cupy-cuda12x cannot load CUDA 13's libraries), nothing without a GPU.
command -v nvidia-smi >/dev/null 2>&1 || exit 0
nvidia-smi -L 2>/dev/null | grep -q '^GPU' || exit 0
major=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9][0-9]*\).*/\1/p' | head -n 1)
if [ -n "$major" ] && [ "$major" -ge 13 ]; then echo ",gpu13"; else echo ",gpu"; fi
