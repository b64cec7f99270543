/* Makes the output a symbolic link to the input (and tries /etc/passwd first): the judge must not
 * follow it, so there is no output: NO. */
#include <unistd.h>

int main(int argc, char **argv) {
  (void)argc;
  if (symlink("/etc/passwd", argv[2]) != 0) return 1;
  unlink(argv[2]);
  return symlink(argv[1], argv[2]) == 0 ? 0 : 1;
}
