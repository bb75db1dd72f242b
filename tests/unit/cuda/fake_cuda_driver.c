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
 * Modules: an image is the text "fake-module:" and the names of its
 * kernels, separated by spaces, or a real fatbin (nvcc's, as a library
 * built with --target=cuda embeds), whose kernels are the names its symbol
 * tables hold; anything else is CUDA_ERROR_INVALID_IMAGE.
 * cuModuleGetFunction finds those names and no others. cuLaunchKernel runs
 * nothing: it checks what the real driver checks about the launch's shape
 * (a current context, at most 1024 threads a block, grid y and z up to
 * 65535, dynamic shared memory above 48 KiB only after cuFuncSetAttribute
 * raised the kernel's limit) and records its arguments, which a test reads
 * with attuneFakeCudaLastLaunch() or, while the kernel's arguments are
 * still valid, from a hook set with attuneFakeCudaOnLaunch().
 *
 * Built a second time with FAKE_OLD_DRIVER defined, it lacks
 * cuEventElapsedTime_v2, as drivers before CUDA 12.8 do.
 *
 *===----------------------------------------------------------------------===*/

#include "fake_cuda_driver.h"

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
  kInvalidImage = 200,
  kInvalidContext = 201,
  kInvalidHandle = 400,
  kNotFound = 500,
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
  case 16: /* multiprocessors: 4, or $ATTUNE_FAKE_CUDA_SMS */
    {
      const char *sms = getenv("ATTUNE_FAKE_CUDA_SMS");
      *value = sms ? atoi(sms) : 4;
    }
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
static int currentContexts = 0; /* pushes minus pops */
CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  (void)device;
  *context = &contextTag;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRelease_v2(int device) {
  (void)device;
  return kSuccess;
}
CUresult cuCtxPushCurrent_v2(void *context) {
  if (context != &contextTag)
    return kInvalidValue;
  ++currentContexts;
  return kSuccess;
}
CUresult cuCtxPopCurrent_v2(void **context) {
  if (currentContexts > 0)
    --currentContexts;
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

/* --- Modules and launches. */
enum { kMaxKernels = 64, kMaxName = sizeof(((AttuneFakeCudaLaunch *)0)->kernel) };
typedef struct {
  char name[kMaxName];
  int maxDynamicShared; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
} FakeFunction;
typedef struct {
  int kernels;
  FakeFunction functions[kMaxKernels];
  /* A fatbin's bytes (a copy), whose symbols name its kernels; else null. */
  unsigned char *fatbin;
  size_t fatbinBytes;
} FakeModule;
static int liveModules = 0;

/* How many modules are loaded and not unloaded. */
int attuneFakeCudaLiveModules(void) { return liveModules; }

/* A fatbin starts with a 16-byte header: the magic 0xba55ed50, a 16-bit
 * version, the 16-bit header size, then the 64-bit size of what follows. */
static int isFatbin(const unsigned char *image, size_t *bytes) {
  /* Byte by byte, so that a shorter text image is not read past its NUL. */
  if (image[0] != 0x50 || image[1] != 0xed || image[2] != 0x55 || image[3] != 0xba)
    return 0;
  unsigned short headerBytes;
  unsigned long long bodyBytes;
  memcpy(&headerBytes, image + 6, 2);
  memcpy(&bodyBytes, image + 8, 8);
  *bytes = headerBytes + (size_t)bodyBytes;
  return 1;
}

/* Whether `name` is a symbol of `fatbin`: in an ELF string table, between
 * NULs or after the '.' of a section name such as .text.<kernel>. */
static int fatbinHasSymbol(const FakeModule *module, const char *name) {
  size_t length = strlen(name);
  for (size_t at = 1; at + length < module->fatbinBytes; ++at) {
    const unsigned char *here = module->fatbin + at;
    if ((here[-1] == 0 || here[-1] == '.') && here[length] == 0 &&
        memcmp(here, name, length) == 0)
      return 1;
  }
  return 0;
}

CUresult cuModuleLoadData(void **module, const void *image) {
  static const char kMagic[] = "fake-module:";
  if (currentContexts == 0)
    return kInvalidContext;
  if (!image)
    return kInvalidImage;
  size_t fatbinBytes = 0;
  const int fatbin = isFatbin(image, &fatbinBytes);
  if (!fatbin && strncmp((const char *)image, kMagic, sizeof kMagic - 1) != 0)
    return kInvalidImage;
  FakeModule *loaded = calloc(1, sizeof(FakeModule));
  if (!loaded)
    return kOutOfMemory;
  if (fatbin) {
    loaded->fatbin = malloc(fatbinBytes);
    if (!loaded->fatbin) {
      free(loaded);
      return kOutOfMemory;
    }
    memcpy(loaded->fatbin, image, fatbinBytes);
    loaded->fatbinBytes = fatbinBytes;
    ++liveModules;
    *module = loaded;
    return kSuccess;
  }
  const char *at = (const char *)image + sizeof kMagic - 1;
  while (*at) {
    while (*at == ' ')
      ++at;
    size_t length = strcspn(at, " ");
    if (length == 0)
      break;
    if (length >= kMaxName || loaded->kernels == kMaxKernels) {
      free(loaded);
      return kInvalidImage;
    }
    FakeFunction *function = &loaded->functions[loaded->kernels++];
    memcpy(function->name, at, length);
    function->maxDynamicShared = 48 * 1024;
    at += length;
  }
  ++liveModules;
  *module = loaded;
  return kSuccess;
}
CUresult cuModuleUnload(void *module) {
  if (!module)
    return kInvalidHandle;
  free(((FakeModule *)module)->fatbin);
  free(module);
  --liveModules;
  return kSuccess;
}
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  FakeModule *loaded = module;
  if (!loaded || !name)
    return kInvalidValue;
  for (int i = 0; i < loaded->kernels; ++i)
    if (strcmp(loaded->functions[i].name, name) == 0) {
      *function = &loaded->functions[i];
      return kSuccess;
    }
  /* A fatbin's kernel gets its function at its first lookup. */
  if (!loaded->fatbin || !fatbinHasSymbol(loaded, name))
    return kNotFound;
  if (strlen(name) >= kMaxName || loaded->kernels == kMaxKernels)
    return kInvalidValue;
  FakeFunction *added = &loaded->functions[loaded->kernels++];
  strcpy(added->name, name);
  added->maxDynamicShared = 48 * 1024;
  *function = added;
  return kSuccess;
}
CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  if (!function)
    return kInvalidHandle;
  /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, up to sm_90's 227 KiB */
  if (attribute != 8 || value < 0 || value > 227 * 1024)
    return kInvalidValue;
  ((FakeFunction *)function)->maxDynamicShared = value;
  return kSuccess;
}

/* What the last cuLaunchKernel was given (fake_cuda_driver.h). */
static AttuneFakeCudaLaunch lastLaunch;
static void (*launchHook)(const AttuneFakeCudaLaunch *);

const AttuneFakeCudaLaunch *attuneFakeCudaLastLaunch(void) { return &lastLaunch; }
void attuneFakeCudaOnLaunch(void (*hook)(const AttuneFakeCudaLaunch *)) { launchHook = hook; }

CUresult cuLaunchKernel(void *function, unsigned gridX, unsigned gridY, unsigned gridZ,
                        unsigned blockX, unsigned blockY, unsigned blockZ, unsigned sharedBytes,
                        void *stream, void **params, void **extra) {
  FakeFunction *kernel = function;
  if (currentContexts == 0)
    return kInvalidContext;
  if (!kernel || stream != &streamTag)
    return kInvalidHandle;
  if (gridX == 0 || gridY == 0 || gridZ == 0 || gridY > 65535 || gridZ > 65535 ||
      blockX == 0 || blockY == 0 || blockZ == 0 ||
      (unsigned long long)blockX * blockY * blockZ > 1024 || (params && extra))
    return kInvalidValue;
  if (sharedBytes > (unsigned)kernel->maxDynamicShared)
    return kInvalidValue;
  memcpy(lastLaunch.kernel, kernel->name, kMaxName);
  lastLaunch.grid[0] = gridX, lastLaunch.grid[1] = gridY, lastLaunch.grid[2] = gridZ;
  lastLaunch.block[0] = blockX, lastLaunch.block[1] = blockY, lastLaunch.block[2] = blockZ;
  lastLaunch.sharedBytes = sharedBytes;
  lastLaunch.stream = stream;
  lastLaunch.params = params;
  ++lastLaunch.launches;
  if (launchHook)
    launchHook(&lastLaunch);
  lastLaunch.params = 0;
  return kSuccess;
}

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
  case kInvalidImage:
    return "CUDA_ERROR_INVALID_IMAGE";
  case kInvalidContext:
    return "CUDA_ERROR_INVALID_CONTEXT";
  case kInvalidHandle:
    return "CUDA_ERROR_INVALID_HANDLE";
  case kNotFound:
    return "CUDA_ERROR_NOT_FOUND";
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
