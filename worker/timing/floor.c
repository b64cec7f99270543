/* The start-up floor's calibration program (worker/timing/floor.py, docs/homework.md "Time").
 *
 * It does what every hw4 program must do and nothing else: start (and, built as hw4.cu for
 * cuda-program, create its CUDA context), read the test's whole input with fread the way the
 * course's programs do, write an output of the right size (4*B*N*d bytes) and exit. Built by the
 * language's own build line and run in the same sandbox as a student's program, its wall time is
 * the part of a test's time that no change to the attention code can win back.
 *
 * The CUDA context is created on a second thread while the input is read (what a careful
 * program does), so the floor is max(context, read) + write: a lower bound, not a typical
 * program's start. No device memory is allocated and nothing is copied: moving Q, K, V to the
 * GPU and O back is part of what a submission chooses (pinned memory, one copy or several).
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#include <pthread.h>

static void *start_cuda(void *ok) {
  *(int *)ok = cudaFree(0) == cudaSuccess;
  return NULL;
}
#endif

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s INPUT OUTPUT\n", argv[0]);
    return 2;
  }
#ifdef __CUDACC__
  pthread_t cuda;
  int cuda_ok = 0;
  if (pthread_create(&cuda, NULL, start_cuda, &cuda_ok) != 0) return 3;
#endif
  FILE *in = fopen(argv[1], "rb");
  int header[3];
  if (in == NULL || fread(header, sizeof header, 1, in) != 1) return 4;
  size_t elements = (size_t)header[0] * (size_t)header[1] * (size_t)header[2];
  float *data = (float *)malloc(3 * elements * sizeof(float));
  if (data == NULL || fread(data, sizeof(float), 3 * elements, in) != 3 * elements) return 5;
  fclose(in);
  FILE *out = fopen(argv[2], "wb");
  if (out == NULL || fwrite(data, sizeof(float), elements, out) != elements) return 6;
  if (fclose(out) != 0) return 6;
#ifdef __CUDACC__
  pthread_join(cuda, NULL);
  if (!cuda_ok) {
    fprintf(stderr, "cudaFree(0) failed: no CUDA context\n");
    return 7;
  }
#endif
  free(data);
  return 0;
}
