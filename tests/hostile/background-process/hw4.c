/* Leaves a daemon behind (double fork + setsid, renamed fj-hostile-bg) that would outlive the
 * test, then exits at once without output (NO). The daemon must be dead when the test is over. */
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(void) {
  if (fork() == 0) {
    setsid();
    if (fork() == 0) {
      prctl(PR_SET_NAME, "fj-hostile-bg");
      for (;;) sleep(1);
    }
    _exit(0);
  }
  sleep(1);
  return 0;
}
