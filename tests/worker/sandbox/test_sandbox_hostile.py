"""The hostile corpus at sandbox level: each program gets its status, is contained, and the next
run works. Real bubblewrap, real cgroups, programs compiled with gcc."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.worker.sandbox.sandbox_helpers import processes_named, run_binary
from worker.sandbox.bwrap import Bind, Limits, RunStatus, Sandbox, read_regular_file
from worker.sandbox.cgroups import detect_layout

Compile = Callable[[str, str], Path]

SPIN = "int main(void) { for (;;) { } }"
SLEEP = "#include <unistd.h>\nint main(void) { sleep(100); return 0; }"
FORK_BOMB = """
#include <unistd.h>
int main(void) { for (;;) fork(); }
"""
BIG_FILE = r"""
#include <stdio.h>
#include <string.h>
int main(void) {
    static char block[1 << 20];
    memset(block, 'x', sizeof block);
    FILE *f = fopen("out", "wb");
    for (int i = 0; i < 64; i++) fwrite(block, 1, sizeof block, f);
    fclose(f);
    return 0;
}
"""
BIG_STDOUT = r"""
#include <stdio.h>
int main(void) {
    for (int i = 0; i < 400000; i++) printf("line %d of a long answer\n", i);
    puts("THE END");
    return 0;
}
"""
MALLOC_HOG = r"""
#include <stdlib.h>
int main(void) {  /* 2 GiB, page by page; volatile so the compiler cannot elide it */
    for (int i = 0; i < 64; i++) { volatile char *p = malloc(32 << 20);
        for (int j = 0; p && j < 32 << 20; j += 4096) p[j] = 1; }
    return 0;
}
"""
TRY_WRITE = r"""
#include <stdio.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) { FILE *f = fopen(argv[i], "w");
        printf("%s %s\n", f ? "WROTE" : "denied", argv[i]); if (f) fclose(f); }
    return 0;
}
"""
TRY_READ = r"""
#include <stdio.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) { FILE *f = fopen(argv[i], "r");
        printf("%s %s\n", f ? "READ" : "hidden", argv[i]); if (f) fclose(f); }
    return 0;
}
"""
PRINT_ENV = r"""
#include <stdio.h>
extern char **environ;
int main(void) {
    for (char **e = environ; *e; e++) puts(*e);
    FILE *f = fopen("/proc/1/environ", "r"); int c;
    if (f) { while ((c = fgetc(f)) != EOF) putchar(c ? c : '\n'); fclose(f); }
    return 0;
}
"""
CONNECT = r"""
#include <arpa/inet.h>
#include <stdio.h>
#include <sys/socket.h>
int main(void) {
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(6379) };
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0) { puts("CONNECTED"); return 0; }
    puts("no network"); return 1;
}
"""
BACKGROUND = r"""
#include <unistd.h>
int main(void) {
    if (fork() == 0) { setsid(); if (fork() == 0) { sleep(100); } return 0; }
    return 0;
}
"""
SYMLINKS = r"""
#include <unistd.h>
#include <stdio.h>
int main(void) {
    symlink("/etc/passwd", "out");
    symlink("/work", "dir");
    FILE *f = fopen("real", "w"); fputs("42\n", f); fclose(f);
    return 0;
}
"""
WHOAMI = r"""
#include <stdio.h>
#include <unistd.h>
int main(void) {
    printf("%d %d\n", (int)getuid(), (int)getgid());
    FILE *f = fopen("mine", "w"); fclose(f);
    return 0;
}
"""
CRASH = "int main(void) { volatile int *p = 0; return *p; }"
EXIT3 = "int main(void) { return 3; }"


def test_infinite_loop_times_out_and_leaves_no_process(sandbox: Sandbox, compile_c: Compile,
                                                       workdir: Path, assert_healthy) -> None:
    spin = compile_c("spin", SPIN)
    result = run_binary(sandbox, spin, workdir, limits=Limits(wall_s=1.0))
    assert result.status is RunStatus.TIMEOUT
    assert 1.0 <= result.wall_s < 3.0
    assert processes_named(spin.name) == []
    assert_healthy()


def test_sleep_times_out(sandbox: Sandbox, compile_c: Compile, workdir: Path) -> None:
    sleeper = compile_c("sleeper", SLEEP)
    result = run_binary(sandbox, sleeper, workdir, limits=Limits(wall_s=0.5))
    assert result.status is RunStatus.TIMEOUT
    assert "wall-time" in result.message
    assert processes_named(sleeper.name) == []


def test_fork_bomb_is_contained_by_the_pids_limit(sandbox: Sandbox, compile_c: Compile,
                                                  workdir: Path, assert_healthy) -> None:
    bomb = compile_c("forkbomb", FORK_BOMB)
    result = run_binary(sandbox, bomb, workdir, limits=Limits(wall_s=1.0, pids=64))
    assert result.status in (RunStatus.TIMEOUT, RunStatus.EXIT_NONZERO)
    assert processes_named(bomb.name) == []
    assert_healthy()


def test_file_over_the_size_limit_is_output_limit(sandbox: Sandbox, compile_c: Compile,
                                                  workdir: Path) -> None:
    writer = compile_c("bigfile", BIG_FILE)
    result = run_binary(sandbox, writer, workdir,
                        limits=Limits(wall_s=10, file_size_bytes=1 << 20))
    assert result.status is RunStatus.OUTPUT_LIMIT
    assert (workdir / "out").stat().st_size <= 1 << 20


def test_huge_stdout_keeps_only_a_bounded_tail(sandbox: Sandbox, compile_c: Compile,
                                               workdir: Path) -> None:
    chatty = compile_c("chatty", BIG_STDOUT)
    result = run_binary(sandbox, chatty, workdir,
                        limits=Limits(wall_s=20, log_tail_bytes=4096))
    assert result.status is RunStatus.OK
    assert len(result.stdout_tail.encode()) <= 4096
    assert result.stdout_tail.endswith("line 399999 of a long answer\nTHE END\n")
    assert result.output_truncated


def test_memory_hog_is_killed_as_memory(sandbox: Sandbox, compile_c: Compile, workdir: Path,
                                        assert_healthy) -> None:
    hog = compile_c("hog", MALLOC_HOG)
    result = run_binary(sandbox, hog, workdir,
                        limits=Limits(wall_s=20, memory_bytes=256 << 20))
    assert result.status is RunStatus.MEMORY
    assert "memory limit" in result.message
    assert result.memory_peak_bytes is None or result.memory_peak_bytes >= 200 << 20
    assert_healthy()


def test_writes_outside_the_work_dir_fail_and_reach_nothing_on_the_host(
    sandbox: Sandbox, compile_c: Compile, workdir: Path
) -> None:
    token = uuid.uuid4().hex[:8]
    targets = [f"/usr/fj_{token}", f"/etc/fj_{token}", f"/fj_{token}", f"/proc/fj_{token}"]
    writer = compile_c("trywrite", TRY_WRITE)
    result = run_binary(sandbox, writer, workdir, *targets, f"/tmp/fj_{token}", "here")
    assert result.status is RunStatus.OK
    for target in targets:
        assert f"denied {target}\n" in result.stdout_tail
    assert "WROTE here" in result.stdout_tail  # the work dir itself is writable
    assert "WROTE /tmp/" in result.stdout_tail  # a private /tmp ...
    assert not Path(f"/tmp/fj_{token}").exists()  # ... that is not the host's
    assert (workdir / "here").is_file()


def test_judge_files_are_invisible(sandbox: Sandbox, compile_c: Compile, workdir: Path,
                                   tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "hw4" / "t01"
    cache.mkdir(parents=True)
    (cache / "expected.bin").write_bytes(b"answer")
    host_tmp = Path(f"/tmp/fj_secret_{uuid.uuid4().hex[:8]}")
    host_tmp.write_text("secret")
    guesses = [str(cache / "expected.bin"), str(host_tmp), "/etc/shadow", "/root/.bashrc",
               str(Path.cwd() / "pyproject.toml"), "/data/hw4/t01.out"]
    try:
        reader = compile_c("tryread", TRY_READ)
        result = run_binary(sandbox, reader, workdir, *guesses, "/etc/passwd")
    finally:
        host_tmp.unlink()
    for guess in guesses:
        assert f"hidden {guess}\n" in result.stdout_tail
    assert "READ /etc/passwd" in result.stdout_tail  # a stub naming only the sandbox user


def test_worker_secrets_do_not_reach_the_program(sandbox: Sandbox, compile_c: Compile,
                                                 workdir: Path, monkeypatch) -> None:
    monkeypatch.setenv("FLASHJUDGE_BROKER_URL", "redis://:hunter2@broker:6379/0")
    printer = compile_c("printenv", PRINT_ENV)
    result = run_binary(sandbox, printer, workdir)
    assert result.status is RunStatus.OK
    assert "HOME=/work" in result.stdout_tail
    assert "hunter2" not in result.stdout_tail


PID1_ENV = r"""
#include <stdio.h>
int main(void) {
    FILE *f = fopen("/proc/1/environ", "r"); int c;
    if (!f) { puts("unreadable"); return 0; }
    while ((c = fgetc(f)) != EOF) putchar(c ? c : '\n');
    fclose(f);
    return 0;
}
"""


def test_pid_1_shows_nothing_of_the_judges_directory(sandbox: Sandbox, compile_c: Compile,
                                                     workdir: Path, tmp_path: Path,
                                                     monkeypatch) -> None:
    """Red-team item 11: /proc/1/environ (bwrap's environment) showed PWD, the judge's own
    directory. bwrap starts from / with a scrubbed environment."""
    judge_dir = tmp_path / "judge-home-7c1e"
    judge_dir.mkdir()
    monkeypatch.chdir(judge_dir)
    printer = compile_c("pid1env", PID1_ENV)
    result = run_binary(sandbox, printer, workdir)
    assert result.status is RunStatus.OK
    assert "judge-home-7c1e" not in result.stdout_tail
    assert [line for line in result.stdout_tail.splitlines()
            if not line.startswith("LD_LIBRARY_PATH=")] == []  # a bundle's library path only


def test_caller_environment_is_passed(sandbox: Sandbox, workdir: Path) -> None:
    result = sandbox.run(["sh", "-c", "echo $OMP_NUM_THREADS"], workdir=workdir,
                         limits=Limits(wall_s=5), env={"OMP_NUM_THREADS": "2"})
    assert result.stdout_tail == "2\n"


def test_no_network_even_to_a_local_service(sandbox: Sandbox, compile_c: Compile,
                                            workdir: Path) -> None:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        pytest.skip("no local service on 127.0.0.1:6379 to try to reach")
    client = compile_c("connect", CONNECT)
    result = run_binary(sandbox, client, workdir)
    assert result.status is RunStatus.EXIT_NONZERO
    assert "no network" in result.stdout_tail


def test_background_process_is_dead_after_the_run(sandbox: Sandbox, compile_c: Compile,
                                                  workdir: Path, assert_healthy) -> None:
    daemon = compile_c("daemon", BACKGROUND)
    result = run_binary(sandbox, daemon, workdir)
    assert result.status is RunStatus.OK
    assert processes_named(daemon.name) == []
    assert_healthy()


def test_symlinked_outputs_are_rejected(sandbox: Sandbox, compile_c: Compile,
                                        workdir: Path) -> None:
    linker = compile_c("linker", SYMLINKS)
    result = run_binary(sandbox, linker, workdir)
    assert result.status is RunStatus.OK
    assert (workdir / "out").is_symlink()
    assert read_regular_file(workdir, "out") is None
    assert read_regular_file(workdir, "dir") is None
    assert read_regular_file(workdir, "missing") is None
    assert read_regular_file(workdir, "../etc/passwd") is None
    real = read_regular_file(workdir, "real")
    assert real is not None and real.read_text() == "42\n"


def test_runs_as_uid_65534_inside_and_unprivileged_on_the_host(
    sandbox: Sandbox, compile_c: Compile, workdir: Path
) -> None:
    whoami = compile_c("whoami", WHOAMI)
    result = run_binary(sandbox, whoami, workdir)
    assert result.stdout_tail == "65534 65534\n"
    if os.geteuid() == 0:
        assert (workdir / "mine").stat().st_uid == 65534


def test_crash_and_exit_code_are_reported(sandbox: Sandbox, compile_c: Compile,
                                          workdir: Path) -> None:
    crashed = run_binary(sandbox, compile_c("crash", CRASH), workdir)
    assert (crashed.status, crashed.signal) == (RunStatus.SIGNALED, 11)
    exited = run_binary(sandbox, compile_c("exit3", EXIT3), workdir)
    assert (exited.status, exited.exit_code) == (RunStatus.EXIT_NONZERO, 3)


def test_input_bind_is_readable_not_writable(sandbox: Sandbox, workdir: Path,
                                             tmp_path: Path) -> None:
    data = tmp_path / "private" / "t01.in"
    data.parent.mkdir(mode=0o700)
    data.write_text("input data\n")
    result = sandbox.run(["sh", "-c", "cat /in/t01.in; echo x >> /in/t01.in || echo ro"],
                         workdir=workdir, limits=Limits(wall_s=5),
                         binds=[Bind(source=data, target="/in/t01.in")])
    assert result.stdout_tail == "input data\nro\n"
    assert data.read_text() == "input data\n"


def test_sandbox_start_failure_is_a_system_error(sandbox: Sandbox, workdir: Path,
                                                 tmp_path: Path) -> None:
    (tmp_path / "x").write_text("x")
    missing = sandbox.run(["true"], workdir=workdir, limits=Limits(wall_s=5),
                          binds=[Bind(source=tmp_path / "nope", target="/in/x")])
    assert missing.status is RunStatus.SYSTEM_ERROR
    unmountable = sandbox.run(["true"], workdir=workdir, limits=Limits(wall_s=5),
                              binds=[Bind(source=tmp_path / "x", target="/usr/fj_new/x")])
    assert unmountable.status is RunStatus.SYSTEM_ERROR
    assert "sandbox failed to start" in unmountable.message


def test_run_cgroups_are_removed(sandbox: Sandbox, workdir: Path) -> None:
    sandbox.run(["true"], workdir=workdir, limits=Limits(wall_s=5))
    for parent in detect_layout().parents.values():
        assert not list(parent.glob(f"run-{os.getpid()}-*"))


def test_builds_work_inside_make_gcc_openmp(sandbox: Sandbox, workdir: Path) -> None:
    (workdir / "hw4.c").write_text(
        '#include <omp.h>\n#include <stdio.h>\n'
        'int main(void) { printf("threads %d\\n", omp_get_max_threads() > 0); return 0; }\n'
    )
    (workdir / "Makefile").write_text("hw4: hw4.c\n\tgcc -O2 -fopenmp -o hw4 hw4.c\n")
    build = sandbox.run(["make", "hw4"], workdir=workdir, limits=Limits(wall_s=60))
    assert build.status is RunStatus.OK, build.stderr_tail
    run = sandbox.run(["./hw4"], workdir=workdir, limits=Limits(wall_s=10))
    assert run.stdout_tail == "threads 1\n"


def test_nvcc_compiles_inside(sandbox: Sandbox, workdir: Path) -> None:
    nvcc = Path("/usr/local/cuda/bin/nvcc")
    if not nvcc.exists():
        pytest.skip("no CUDA toolkit at /usr/local/cuda")
    (workdir / "k.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n")
    build = sandbox.run([str(nvcc), "-o", "k", "k.cu"], workdir=workdir,
                        limits=Limits(wall_s=60))
    assert build.status is RunStatus.OK, build.stderr_tail
    assert read_regular_file(workdir, "k") is not None


FORK_COUNT = r"""
#include <stdio.h>
#include <unistd.h>
int main(void) {
    int made = 0;
    for (int i = 0; i < 100; i++) { pid_t p = fork(); if (p == 0) { sleep(5); _exit(0); }
        if (p > 0) made++; }
    printf("made %d\n", made);
    return 0;
}
"""
TOUCH_64M = r"""
#include <stdlib.h>
int main(void) {
    volatile char *p = malloc(64 << 20);  /* volatile: the compiler may not elide the pages */
    for (int i = 0; i < 64 << 20; i += 4096) p[i] = 1;
    return 0;
}
"""


def test_pids_limit_stops_forks_past_it(sandbox: Sandbox, compile_c: Compile,
                                        workdir: Path) -> None:
    forker = compile_c("forkcount", FORK_COUNT)
    result = run_binary(sandbox, forker, workdir, limits=Limits(wall_s=10, pids=32))
    assert result.status is RunStatus.OK
    made = int(result.stdout_tail.split()[1])
    assert 0 < made < 32  # bwrap's own processes count too
    assert processes_named(forker.name) == []  # the sleeping children died with the run


def test_memory_peak_is_reported(sandbox: Sandbox, compile_c: Compile, workdir: Path) -> None:
    result = run_binary(sandbox, compile_c("touch64", TOUCH_64M), workdir)
    assert result.status is RunStatus.OK
    if result.memory_peak_bytes is None:
        pytest.skip("this kernel reports no peak memory for cgroups")
    assert result.memory_peak_bytes >= 64 << 20
