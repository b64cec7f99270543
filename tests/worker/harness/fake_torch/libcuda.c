// A stand-in libcuda.so.1 for the Python runner's protocol test on machines without a GPU: the
// virtual memory calls the runner makes succeed and hand back a made-up address.
typedef unsigned long long u64;
int cuMemImportFromShareableHandle(u64* handle, void* fd, int type) { *handle = 7; return 0; }
int cuMemAddressReserve(u64* ptr, unsigned long size, unsigned long align, u64 addr, u64 flags) {
  *ptr = 0x7f0000000000ull;
  return 0;
}
int cuMemMap(u64 ptr, unsigned long size, unsigned long offset, u64 handle, u64 flags) { return 0; }
int cuMemSetAccess(u64 ptr, unsigned long size, const void* desc, unsigned long count) { return 0; }
