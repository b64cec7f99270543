/* Writes without end to the output file. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  static char block[1 << 20];
  memset(block, 0x41, sizeof block);
  FILE *out = fopen(argv[2], "wb");
  if (!out) return 1;
  for (;;)
    if (fwrite(block, 1, sizeof block, out) != sizeof block) return 2;
}
