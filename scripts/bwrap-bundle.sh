#!/usr/bin/env bash
# Build .bwrap/: Debian's bubblewrap plus the three shared libraries it links against, so the
# sandbox can run on a GPU node that has no bubblewrap package (Ubuntu 24.04 at the time of writing),
# and util-linux's setpriv (+ libcap-ng), which the sandbox's vfork launch uses to drop host root
# (worker/sandbox_launch.py looks for it next to bwrap first).
# Use there with:  FLASHJUDGE_BWRAP=/path/to/.bwrap/bwrap  (the sandbox sets LD_LIBRARY_PATH to
# .bwrap/lib for the bwrap process only; the program inside never sees it).
# Needs apt-get (a Debian/Ubuntu machine with package lists) and dpkg-deb; downloads, installs nothing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/.bwrap}"
packages=(bubblewrap libselinux1 libcap2 libpcre2-8-0 util-linux libcap-ng0)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"  # apt-get download runs as _apt and must write here

(cd "$work" && apt-get download "${packages[@]}" >/dev/null)
for deb in "$work"/*.deb; do
    dpkg-deb -x "$deb" "$work/root"
done

rm -rf "$out"
mkdir -p "$out/lib"
cp "$work/root/usr/bin/bwrap" "$out/bwrap"
cp "$work/root/usr/bin/setpriv" "$out/setpriv"
for lib in libselinux.so.1 libcap.so.2 libpcre2-8.so.0 libcap-ng.so.0; do
    found="$(find "$work/root" -name "$lib" | head -n 1)"
    if [[ -z "$found" ]]; then
        echo "bwrap-bundle: $lib not found in the downloaded packages" >&2
        exit 1
    fi
    cp -L "$found" "$out/lib/$lib"
done
chmod 0755 "$out/bwrap" "$out/setpriv"
"$out/bwrap" --version >/dev/null 2>&1 || LD_LIBRARY_PATH="$out/lib" "$out/bwrap" --version >/dev/null
echo "bwrap bundle ready: $out (FLASHJUDGE_BWRAP=$out/bwrap)"
