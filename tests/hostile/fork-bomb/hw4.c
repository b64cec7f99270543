/* A fork bomb: the pids limit stops it growing, the wall limit kills the lot. */
#include <unistd.h>

int main(void) {
  for (;;) fork();
}
