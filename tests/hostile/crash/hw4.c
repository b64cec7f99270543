/* Crashes: dereferences a null pointer (SIGSEGV). */
#include <stdio.h>

int main(int argc, char **argv) {
  volatile int *p = NULL;
  fprintf(stderr, "about to crash\n");
  *p = argc;
  return 0;
}
