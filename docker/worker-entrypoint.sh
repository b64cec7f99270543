#!/bin/sh
# Worker container entrypoint: prepare the sandbox's cgroups, then run the worker with only the
# capabilities the sandbox needs.
#
# Why the worker stays uid 0 (without root's powers): the sandbox runs every judged program as
# host uid 65534, a user that owns nothing of the judge. A sandbox escape then finds neither the
# expected outputs nor the worker's broker credentials (/proc/<worker>/environ), which it would
# if programs ran as the worker's own uid. Switching to uid 65534 and cleaning up after it takes
# exactly the capabilities in KEEP_CAPS; everything else, CAP_SYS_ADMIN included, is dropped from
# the bounding set before the worker starts, with no_new_privs set.
#
# Why CAP_SYS_ADMIN is granted to the container at all: only here, to make the container's own
# cgroup namespace writable and give the runs a subtree, the way systemd delegates:
#   $CG/init          every process that was in the root (the "no internal processes" rule)
#   $CG/judge         FLASHJUDGE_CGROUP_ROOT: run cgroups are made below it
#   $CG/judge/worker  where the worker processes live, so judge itself holds no process
set -eu

KEEP_CAPS="chown,dac_override,fowner,kill,setgid,setuid"
JUDGE="${FLASHJUDGE_CGROUP_ROOT:-/sys/fs/cgroup/judge}"
CG="$(dirname "$JUDGE")"

fail() {
    echo "flashjudge-worker-entrypoint: $*" >&2
    exit 70
}

prepare_cgroups() {
    [ -f "$CG/cgroup.controllers" ] \
        || fail "$CG is not cgroup v2; on a cgroup v1 host run \`flashjudge worker\` directly (docs/deployment.md)"
    if ! touch "$CG/.flashjudge-probe" 2>/dev/null; then
        mount -o remount,rw "$CG" 2>/dev/null \
            || fail "$CG is read-only and cannot be remounted: the worker needs cap_add SYS_ADMIN and security_opt apparmor=unconfined (docker-compose.yml has them)"
    fi
    rm -f "$CG/.flashjudge-probe"
    mkdir -p "$CG/init" "$JUDGE/worker"
    for pid in $(cat "$CG/cgroup.procs"); do
        echo "$pid" > "$CG/init/cgroup.procs" 2>/dev/null || true
    done
    echo "+memory +pids" > "$CG/cgroup.subtree_control" \
        || fail "cannot enable the memory and pids controllers in $CG"
    echo $$ > "$JUDGE/worker/cgroup.procs"
}

if [ "$(id -u)" != 0 ]; then
    # Started with `user:` set: the operator has made cgroups and the sandbox work another way.
    exec "$@"
fi
prepare_cgroups
exec setpriv --inh-caps=-all --bounding-set=-all,+"$(echo "$KEEP_CAPS" | sed 's/,/,+/g')" \
    --no-new-privs -- "$@"
