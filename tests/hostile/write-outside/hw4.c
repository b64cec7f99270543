/* Tries to write outside its work dir: the host's /tmp and /dev/shm, the toolchain, /etc, the
 * parent of the work dir. Whatever succeeds inside the sandbox must not reach the host. Then writes
 * a zero output (WA). */
#include <stdio.h>
#include <string.h>

static const char *targets[] = {
    "/tmp/flashjudge-hostile-escape",  "/dev/shm/flashjudge-hostile-escape",
    "/usr/flashjudge-hostile-escape",  "/etc/flashjudge-hostile-escape",
    "/work/../flashjudge-hostile-escape", "/input/flashjudge-hostile-escape",
    "/root/flashjudge-hostile-escape",
};

int main(int argc, char **argv) {
  for (size_t i = 0; i < sizeof targets / sizeof *targets; ++i) {
    FILE *f = fopen(targets[i], "w");
    fprintf(stderr, "%s: %s\n", targets[i], f ? "written (inside the sandbox)" : "denied");
    if (f) fclose(f);
  }
  FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
  int h[3];
  if (!in || !out || fread(h, 4, 3, in) != 3) return 1;
  static float zero[4096];
  for (size_t n = (size_t)h[0] * h[1] * h[2]; n > 0;) {
    size_t k = n < 4096 ? n : 4096;
    fwrite(zero, 4, k, out);
    n -= k;
  }
  fclose(out);
  return 0;
}
