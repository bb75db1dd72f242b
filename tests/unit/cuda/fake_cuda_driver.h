/*===- fake_cuda_driver.h - what the stand-in driver tells its tests -------===*
 *
 * fake_cuda_driver.c records each kernel launch instead of running it; a
 * test reads the record through these functions, which it looks up with
 * dlsym in the stand-in the runtime loaded (attuneFakeCuda() in C++).
 *
 *===----------------------------------------------------------------------===*/

#ifndef ATTUNE_TESTS_UNIT_CUDA_FAKE_CUDA_DRIVER_H
#define ATTUNE_TESTS_UNIT_CUDA_FAKE_CUDA_DRIVER_H

#ifdef __cplusplus
extern "C" {
#endif

/* The last successful cuLaunchKernel. */
typedef struct {
  char kernel[512]; /* the name cuModuleGetFunction found it by */
  unsigned grid[3], block[3], sharedBytes;
  void *stream;
  void **params; /* the kernel's arguments: valid only inside a launch hook */
  int launches;  /* successful launches so far, in the process */
} AttuneFakeCudaLaunch;

typedef const AttuneFakeCudaLaunch *(*AttuneFakeCudaLastLaunch)(void);
/* Calls `hook` (null: none) inside every successful launch. */
typedef void (*AttuneFakeCudaOnLaunch)(void (*hook)(const AttuneFakeCudaLaunch *));
/* How many modules are loaded and not unloaded. */
typedef int (*AttuneFakeCudaLiveModules)(void);

#ifdef __cplusplus
} /* extern "C" */

#include <dlfcn.h>

/// The stand-in's own entry points, from the copy at `path` the runtime
/// loaded (null members when it is not loaded).
struct AttuneFakeCuda {
  AttuneFakeCudaLastLaunch lastLaunch = nullptr;
  AttuneFakeCudaOnLaunch onLaunch = nullptr;
  AttuneFakeCudaLiveModules liveModules = nullptr;
};
inline AttuneFakeCuda attuneFakeCuda(const char *path) {
  AttuneFakeCuda fake;
  // RTLD_NOLOAD: the handle of the copy already loaded, not a new one.
  if (void *handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD)) {
    fake.lastLaunch =
        reinterpret_cast<AttuneFakeCudaLastLaunch>(dlsym(handle, "attuneFakeCudaLastLaunch"));
    fake.onLaunch =
        reinterpret_cast<AttuneFakeCudaOnLaunch>(dlsym(handle, "attuneFakeCudaOnLaunch"));
    fake.liveModules =
        reinterpret_cast<AttuneFakeCudaLiveModules>(dlsym(handle, "attuneFakeCudaLiveModules"));
    dlclose(handle); // the runtime's reference keeps it loaded
  }
  return fake;
}
#endif

#endif /* ATTUNE_TESTS_UNIT_CUDA_FAKE_CUDA_DRIVER_H */
