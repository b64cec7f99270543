// The honest program (tests/hostile/cuda-correct, sent along as honest.cuh) with its main
// renamed, and what this case adds around it.
#define main real_main
#include "honest.cuh"
#undef main

// Borrowed attention by a second process: the program the judge started never touches the GPU;
// a forked child computes the answer (here with the honest kernel: the rule is about who runs on
// the GPU, not what). The judge sees a second process on the GPU: BK. Its honest twin is
// cuda-correct, the same work in one process.
#include <sys/wait.h>
int main(int argc, char** argv) {
  pid_t child = fork();
  if (child == 0) return real_main(argc, argv);
  int status = 1;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
