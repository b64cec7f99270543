"""Record this node's NVML answers as tests/worker/test_gpus.py replays them (run on a GPU node):

    python3 bench/record_nvml.py > tests/worker/nvml_answers/NAME.json
"""

from __future__ import annotations

import contextlib
import json
import sys


def main() -> int:
    import pynvml

    pynvml.nvmlInit()
    devices = []
    for index in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        text = [pynvml.nvmlDeviceGetUUID(handle), pynvml.nvmlDeviceGetName(handle),
                pynvml.nvmlDeviceGetPciInfo(handle).busId]
        uuid, name, bus = (t.decode() if isinstance(t, bytes) else t for t in text)
        device = {"uuid": uuid, "name": name, "pci_bus_id": bus,
                  "minor": pynvml.nvmlDeviceGetMinorNumber(handle),
                  "compute_cap": list(pynvml.nvmlDeviceGetCudaComputeCapability(handle))}
        with contextlib.suppress(pynvml.NVMLError):  # documented for MIG devices only
            device["sm_count"] = pynvml.nvmlDeviceGetAttributes(handle).multiprocessorCount
        devices.append(device)
    driver = pynvml.nvmlSystemGetDriverVersion()
    pynvml.nvmlShutdown()
    json.dump({"note": "recorded by bench/record_nvml.py",
               "driver": driver.decode() if isinstance(driver, bytes) else driver,
               "devices": devices}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    if "--help" in sys.argv:
        print(__doc__)
        sys.exit(0)
    sys.exit(main())
