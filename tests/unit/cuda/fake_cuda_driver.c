/*===- fake_cuda_driver.c - a CUDA driver without a GPU, for the tests ----===*
 *
 * Exports the entry points runtime/cuda/DriverFunctions.inc resolves, so
 * that the runtime's device layer (CudaDevice.cpp) runs in every test run,
 * GPU or not. "Device memory" is host memory; copies are memcpy; events
 * measure nothing. What the driver does is read from ATTUNE_FAKE_CUDA at
 * each call:
 *
 *   unset or "ok"   one device, "attune fake GPU", 4 SMs, compute
 *                   capability 8.0, 1 GiB, allocations beyond which fail
 *                   with CUDA_ERROR_OUT_OF_MEMORY
 *   "init_fails"    cuInit returns CUDA_ERROR_NO_DEVICE
 *   "no_devices"    cuDeviceGetCount reports 0
 *
 * Built a second time with FAKE_OLD_DRIVER defined, it lacks
 * cuEventElapsedTime_v2, as drivers before CUDA 12.8 do.
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kNoDevice = 100,
};

static const unsigned long long kMemory = 1ull << 30;
static unsigned long long allocated = 0;

static int mode(const char *name) {
  const char *value = getenv("ATTUNE_FAKE_CUDA");
  return value && strcmp(value, name) == 0;
}

CUresult cuInit(unsigned flags) {
  (void)flags;
  return mode("init_fails") ? kNoDevice : kSuccess;
}
CUresult cuDriverGetVersion(int *version) {
  *version = 13000;
  return kSuccess;
}
CUresult cuDeviceGetCount(int *count) {
  *count = mode("no_devices") ? 0 : 1;
  return kSuccess;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal == 0 ? kSuccess : kInvalidValue;
}
CUresult cuDeviceGetName(char *name, int length, int device) {
  (void)device;
  strncpy(name, "attune fake GPU", (size_t)length);
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  switch (attribute) {
  case 16: /* multiprocessors */
    *value = 4;
    return kSuccess;
  case 75: /* compute capability, major */
    *value = 8;
    return kSuccess;
  case 76: /* minor */
    *value = 0;
    return kSuccess;
  }
  return kInvalidValue;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, int device) {
  (void)device;
  *bytes = kMemory;
  return kSuccess;
}

static int contextTag, streamTag, eventTag;
CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  (void)device;
  *context = &contextTag;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRelease_v2(int device) {
  (void)device;
  return kSuccess;
}
CUresult cuCtxPushCurrent_v2(void *context) { return context == &contextTag ? kSuccess : kInvalidValue; }
CUresult cuCtxPopCurrent_v2(void **context) {
  *context = &contextTag;
  return kSuccess;
}
CUresult cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  *stream = &streamTag;
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *stream) { return stream == &streamTag ? kSuccess : kInvalidValue; }
CUresult cuStreamSynchronize(void *stream) { return stream == &streamTag ? kSuccess : kInvalidValue; }

/* Each allocation carries its size in front, so that free can count it. */
CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  if (bytes > kMemory - allocated)
    return kOutOfMemory;
  unsigned long long *block = malloc(bytes + 16);
  if (!block)
    return kOutOfMemory;
  block[0] = bytes;
  allocated += bytes;
  *pointer = (CUdeviceptr)(uintptr_t)(block + 2);
  return kSuccess;
}
CUresult cuMemFree_v2(CUdeviceptr pointer) {
  unsigned long long *block = (unsigned long long *)(uintptr_t)pointer - 2;
  allocated -= block[0];
  free(block);
  return kSuccess;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr to, const void *from, size_t bytes, void *stream) {
  (void)stream;
  memcpy((void *)(uintptr_t)to, from, bytes);
  return kSuccess;
}
CUresult cuMemcpyDtoHAsync_v2(void *to, CUdeviceptr from, size_t bytes, void *stream) {
  (void)stream;
  memcpy(to, (const void *)(uintptr_t)from, bytes);
  return kSuccess;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes, void *stream) {
  (void)stream;
  memmove((void *)(uintptr_t)to, (const void *)(uintptr_t)from, bytes);
  return kSuccess;
}
CUresult cuMemsetD8Async(CUdeviceptr to, unsigned char value, size_t bytes, void *stream) {
  (void)stream;
  memset((void *)(uintptr_t)to, value, bytes);
  return kSuccess;
}
CUresult cuEventCreate(void **event, unsigned flags) {
  (void)flags;
  *event = &eventTag;
  return kSuccess;
}
CUresult cuEventDestroy_v2(void *event) { return event == &eventTag ? kSuccess : kInvalidValue; }
CUresult cuEventRecord(void *event, void *stream) {
  return event == &eventTag && stream == &streamTag ? kSuccess : kInvalidValue;
}
CUresult cuEventSynchronize(void *event) { return event == &eventTag ? kSuccess : kInvalidValue; }
#ifndef FAKE_OLD_DRIVER
CUresult cuEventElapsedTime_v2(float *milliseconds, void *start, void *end) {
  (void)start, (void)end;
  *milliseconds = 0.f;
  return kSuccess;
}
#endif

static const char *errorName(CUresult error) {
  switch (error) {
  case kSuccess:
    return "CUDA_SUCCESS";
  case kInvalidValue:
    return "CUDA_ERROR_INVALID_VALUE";
  case kOutOfMemory:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case kNoDevice:
    return "CUDA_ERROR_NO_DEVICE";
  }
  return 0;
}
CUresult cuGetErrorName(CUresult error, const char **name) {
  *name = errorName(error);
  return *name ? kSuccess : kInvalidValue;
}
CUresult cuGetErrorString(CUresult error, const char **text) {
  *text = error == kNoDevice ? "no CUDA-capable device is detected" : errorName(error);
  return *text ? kSuccess : kInvalidValue;
}
