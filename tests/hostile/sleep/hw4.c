/* Sleeps: uses no CPU time, so only a wall-time limit stops it. */
#include <unistd.h>

int main(void) {
  sleep(1000);
  return 0;
}
