// The honest program (tests/hostile/cuda-correct, sent along as honest.cuh) with its main
// renamed, and what this case adds around it.
#define main real_main
#include "honest.cuh"
#undef main

// A second process by fork and exec: the program starts itself again as a child (a new program
// image, as `subprocess` would), which computes the answer on the GPU; the parent only waits.
// A test runs as one process on the GPU: BK, naming the second process.
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[3], "--child") == 0) return real_main(3, argv);
  pid_t child = fork();
  if (child == 0) {
    char* args[] = {argv[0], argv[1], argv[2], (char*)"--child", nullptr};
    execv("/proc/self/exe", args);
    _exit(127);
  }
  int status = 1;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
