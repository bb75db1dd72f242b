/* Part of every library attune-compile --target=cuda links (embedded in the
 * compiler and compiled with the system C compiler, see
 * compiler/codegen/halide/ModelSupport.h): what ties the library's Halide
 * CUDA kernels to the runtime's device.
 *
 * Halide's CUDA runtime, left to itself, creates a context of its own on its
 * first kernel and runs everything on that context's default stream. The
 * runtime (runtime/cuda/ModelDevice.cpp) owns the device instead: its
 * buffers live in the device's primary context, cuBLASLt queues the matrix
 * products on the handle's stream, and the Halide kernels must run in the
 * same context and on the same stream, in order with the products. So the
 * generated run() calls attune_cuda_enter with the context and stream of
 * the attune_abi_device_t it is given, and Halide's context and stream hooks
 * answer with those.
 *
 * The context is the same for every handle (device 0's primary context),
 * so it is one variable; the stream is the handle's and a handle runs on one
 * thread at a time, so it is the calling thread's. Halide also caches
 * device allocations here (halide_reuse_device_allocations), since a kernel
 * with an intermediate on the device would otherwise cuMemAlloc and cuMemFree
 * it, synchronising the device, on every call; attune_cuda_release (the
 * descriptor's release_device) gives them and the loaded modules back.
 */
#include <stdbool.h>
#include <stddef.h>

/* From HalideRuntime.h and HalideRuntimeCuda.h, which this file is compiled
 * without. */
struct halide_device_interface_t;
typedef int (*halide_cuda_acquire_context_t)(void *, void **, bool);
typedef int (*halide_cuda_release_context_t)(void *);
typedef int (*halide_cuda_get_stream_t)(void *, void *, void **);
extern halide_cuda_acquire_context_t
halide_set_cuda_acquire_context(halide_cuda_acquire_context_t handler);
extern halide_cuda_release_context_t
halide_set_cuda_release_context(halide_cuda_release_context_t handler);
extern halide_cuda_get_stream_t halide_set_cuda_get_stream(halide_cuda_get_stream_t handler);
extern const struct halide_device_interface_t *halide_cuda_device_interface(void);
extern void halide_device_release(void *user_context,
                                  const struct halide_device_interface_t *interface);
extern int halide_reuse_device_allocations(void *user_context, bool reuse);

/* halide_error_code_device_interface_no_device. */
enum { kNoDevice = -36 };

static void *volatile gContext;
static _Thread_local void *tStream;

/* Halide pushes the context it is given around each kernel call and pops it
 * after, so naming the context is all acquiring does. */
static int acquireContext(void *userContext, void **context, bool create) {
  (void)userContext, (void)create;
  if (!gContext)
    return kNoDevice;
  *context = gContext;
  return 0;
}

static int releaseContext(void *userContext) {
  (void)userContext;
  return 0;
}

static int getStream(void *userContext, void *context, void **stream) {
  (void)userContext, (void)context;
  *stream = tStream;
  return 0;
}

__attribute__((constructor)) static void installCudaHooks(void) {
  halide_set_cuda_acquire_context(acquireContext);
  halide_set_cuda_release_context(releaseContext);
  halide_set_cuda_get_stream(getStream);
  halide_reuse_device_allocations(NULL, true);
}

__attribute__((visibility("hidden"))) void attune_cuda_enter(void *context, void *stream) {
  gContext = context;
  tStream = stream;
}

/* Until the next run, Halide has no context: its clean-up when the library
 * is unloaded then finds nothing to release rather than a context the
 * runtime may have let go. */
__attribute__((visibility("hidden"))) void attune_cuda_release(void *context) {
  gContext = context;
  halide_device_release(NULL, halide_cuda_device_interface());
  gContext = NULL;
}
