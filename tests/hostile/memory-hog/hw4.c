/* Touches memory until something stops it. */
#include <stdlib.h>
#include <string.h>

int main(void) {
  for (;;) {
    char *p = malloc(64 << 20);
    if (!p) return 4;
    memset(p, 1, 64 << 20);
  }
}
