/*===- cuda_stub_model.c - a hand-written CUDA library for the runtime tests -===*
 *
 * A descriptor with device ATTUNE_ABI_DEVICE_CUDA whose run() copies its
 * four floats from input to output (on fake_cuda_driver.c device memory is
 * host memory) and whose release_device counts its calls, so that
 * cuda_runtime_fake_test can see when the runtime releases a library's
 * kernels: with the last open handle, not before.
 *
 *===----------------------------------------------------------------------===*/

#include "attune/runtime.h"

#include <string.h>

static int gReleases;

/* Not part of the ABI: how many times release_device was called. */
__attribute__((visibility("default"))) int cuda_stub_model_releases(void) { return gReleases; }

static void releaseDevice(void *context) {
  (void)context;
  ++gReleases;
}
static int64_t workspaceSize(const int64_t *symbols) {
  (void)symbols;
  return 0;
}
static int32_t run(void *const *inputs, void *const *outputs, const int64_t *symbols,
                   void *workspace, const void *weights, const attune_abi_device_t *device) {
  (void)symbols, (void)workspace, (void)weights;
  if (!device || !device->context || !device->stream)
    return -1;
  memcpy(outputs[0], inputs[0], 4 * sizeof(float));
  device->mark(device->user, NULL);
  return 0;
}
static void setNumThreads(int32_t numThreads) { (void)numThreads; }
static const char *lastError(void) { return ""; }
static int32_t setIsaCap(int32_t isa) { return isa; }
static int32_t dispatchedIsa(void) { return -1; }

static const int64_t kDims[] = {4};
static const attune_abi_tensor_t kInputs[] = {{"x", ATTUNE_DTYPE_F32, 1, kDims, 0}};
static const attune_abi_tensor_t kOutputs[] = {{"y", ATTUNE_DTYPE_F32, 1, kDims, 0}};

static const attune_model_abi_t kAbi = {
    ATTUNE_MODEL_ABI_VERSION,
    "cuda_stub",
    1,
    kInputs,
    1,
    kOutputs,
    0,
    NULL,
    NULL,
    workspaceSize,
    run,
    setNumThreads,
    "",
    NULL,
    0,
    ATTUNE_WEIGHTS_EMBEDDED,
    NULL,
    0,
    lastError,
    setIsaCap,
    dispatchedIsa,
    0,
    NULL,
    ATTUNE_ABI_DEVICE_CUDA,
    NULL,
    0,
    releaseDevice,
};

__attribute__((visibility("default"))) const attune_model_abi_t *attune_model_abi(void) {
  return &kAbi;
}
