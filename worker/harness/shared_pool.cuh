// GPU memory shared between the timer (T, which owns it) and the runner (S), without legacy CUDA
// IPC: legacy cudaIpc handles carry the exporter's pid and do not open across PID namespaces, and
// each bubblewrap sandbox has its own. T allocates with the virtual memory API (cuMemCreate) as a
// POSIX file descriptor handle and passes the descriptor over the Unix socket (SCM_RIGHTS), which
// works across any namespaces; S imports it and maps it into its own address space.
//
// The driver API is reached through cudaGetDriverEntryPointByVersion, so neither binary links
// libcuda at build time (the build machine has no driver).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace fjt {

struct DriverApi {
  CUresult (*mem_create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                         unsigned long long) = nullptr;
  CUresult (*address_reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr,
                              unsigned long long) = nullptr;
  CUresult (*mem_map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                      unsigned long long) = nullptr;
  CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t) = nullptr;
  CUresult (*granularity)(size_t*, const CUmemAllocationProp*,
                          CUmemAllocationGranularity_flags) = nullptr;
  CUresult (*export_handle)(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                            unsigned long long) = nullptr;
  CUresult (*import_handle)(CUmemGenericAllocationHandle*, void*,
                            CUmemAllocationHandleType) = nullptr;
};

template <typename F>
inline bool entry(const char* name, F* fn, std::string& err) {
  cudaDriverEntryPointQueryResult status;
  void* p = nullptr;
  cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &status);
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || p == nullptr) {
    err = std::string("the driver has no ") + name;
    return false;
  }
  *fn = reinterpret_cast<F>(p);
  return true;
}

// The entry points, or an explanation in `err` (call after the CUDA runtime is initialised).
inline bool load_driver(DriverApi& api, std::string& err) {
  return entry("cuMemCreate", &api.mem_create, err) &&
         entry("cuMemAddressReserve", &api.address_reserve, err) &&
         entry("cuMemMap", &api.mem_map, err) && entry("cuMemSetAccess", &api.set_access, err) &&
         entry("cuMemGetAllocationGranularity", &api.granularity, err) &&
         entry("cuMemExportToShareableHandle", &api.export_handle, err) &&
         entry("cuMemImportFromShareableHandle", &api.import_handle, err);
}

inline CUmemAllocationProp pool_prop(int device) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

// `bytes` rounded up to the allocation granularity (0 when the driver will not say).
inline size_t pool_size(const DriverApi& api, int device, size_t bytes) {
  CUmemAllocationProp prop = pool_prop(device);
  size_t gran = 0;
  if (api.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) != CUDA_SUCCESS ||
      gran == 0)
    return 0;
  return (bytes + gran - 1) / gran * gran;
}

inline bool failed(CUresult r, const char* what, std::string& err) {
  if (r == CUDA_SUCCESS) return false;
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%s failed (CUresult %d)", what, static_cast<int>(r));
  err = buf;
  return true;
}

// Maps `handle` (`bytes`, a multiple of the granularity) read-write for `device`; returns the address.
inline bool map_pool(const DriverApi& api, CUmemGenericAllocationHandle handle, size_t bytes,
                     int device, CUdeviceptr* ptr, std::string& err) {
  if (failed(api.address_reserve(ptr, bytes, 0, 0, 0), "cuMemAddressReserve", err)) return false;
  if (failed(api.mem_map(*ptr, bytes, 0, handle, 0), "cuMemMap", err)) return false;
  CUmemAccessDesc access = {};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return !failed(api.set_access(*ptr, bytes, &access, 1), "cuMemSetAccess", err);
}

// T's side: a new exportable allocation of `bytes`, mapped here, and its descriptor in *fd.
inline bool create_pool(const DriverApi& api, int device, size_t bytes, CUdeviceptr* ptr, int* fd,
                        std::string& err) {
  CUmemAllocationProp prop = pool_prop(device);
  CUmemGenericAllocationHandle handle;
  if (failed(api.mem_create(&handle, bytes, &prop, 0), "cuMemCreate", err)) return false;
  if (!map_pool(api, handle, bytes, device, ptr, err)) return false;
  return !failed(api.export_handle(fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                 "cuMemExportToShareableHandle", err);
}

// S's side: the allocation behind `fd` (received from T), mapped into this process.
inline bool import_pool(const DriverApi& api, int device, int fd, size_t bytes, CUdeviceptr* ptr,
                        std::string& err) {
  CUmemGenericAllocationHandle handle;
  void* os_handle = reinterpret_cast<void*>(static_cast<uintptr_t>(fd));
  if (failed(api.import_handle(&handle, os_handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
             "cuMemImportFromShareableHandle", err))
    return false;
  return map_pool(api, handle, bytes, device, ptr, err);
}

}  // namespace fjt
