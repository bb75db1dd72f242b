/*===- test_model.c - a hand-written attune model library
 *------------------===//
 *
 * Implements the library ABI of attune/runtime.h by hand, so the runtime can
 * be tested without the compiler. The "model" is
 *
 *   inputs:  ids   i32  [batch, seq], token ids in [0, 10)
 *            mask  bool [batch, seq]
 *            scale f32  [4]
 *   output:  y     f32  [batch, seq, 4],
 *            y[b, s, d] = mask[b, s] ? scale[d] * ids[b, s] : 0
 *
 * with seq at most 64. Built twice: as is, the library embeds an 8-byte
 * "weights" blob; with EXTERNAL_WEIGHTS its descriptor says the same bytes
 * are in the file test_model_weights.safetensors, which the tests write.
 * Either way run() fails unless it is handed exactly those bytes, so a
 * successful run shows the runtime passed the right blob. run() stages ids as
 *floats in the workspace, so a workspace smaller than workspace_size()
 *promised, or misaligned, shows up as wrong results or an error code. Three
 *deliberate faults reach the runtime's error paths: a NaN in scale[0] makes
 *run() fail like a Halide kernel would (with a code and a message in
 *last_error()), batch = 999 asks for a workspace no machine has, batch = 998
 *makes workspace_size() return a negative size, and batch = 997 plays a shape
 * too large for int32 extents: workspace_size() answers 0 and run() fails
 * with Halide's code -6 and no message, as generated libraries do.
 *
 *===----------------------------------------------------------------------===*/

#include "attune/runtime.h"

#include <stdint.h>
#include <string.h>

enum { kSymBatch = 0, kSymSeq = 1, kWidth = 4 };

static const int64_t kIdsDims[] = {-1 - kSymBatch, -1 - kSymSeq};
static const int64_t kScaleDims[] = {kWidth};
static const int64_t kYDims[] = {-1 - kSymBatch, -1 - kSymSeq, kWidth};

static const attune_abi_tensor_t kInputs[] = {
    {"ids", ATTUNE_DTYPE_I32, 2, kIdsDims, 10},
    {"mask", ATTUNE_DTYPE_BOOL, 2, kIdsDims, 0},
    {"scale", ATTUNE_DTYPE_F32, 1, kScaleDims, 0},
};
static const attune_abi_tensor_t kOutputs[] = {
    {"y", ATTUNE_DTYPE_F32, 3, kYDims, 0},
};
static const char *const kSymbolNames[] = {"batch", "seq"};
static const int64_t kSymbolMax[] = {-1, 64};

/* The kernel-error codes run() returns; the tests check that they surface. */
enum {
  kErrorMisaligned = -2,
  kErrorNaNScale = -3,
  kErrorWrongWeights = -4,
  kErrorExtentsTooLarge = -6
};

static const char kWeights[] = {'w', 'e', 'i', 'g', 'h', 't', 's', '!'};

enum {
  kBatchHugeWorkspace = 999,
  kBatchNegativeWorkspace = 998,
  kBatchExtentsTooLarge = 997
};

static int64_t workspaceSize(const int64_t *symbols) {
  if (symbols[kSymBatch] == kBatchHugeWorkspace)
    return (int64_t)1 << 62;
  if (symbols[kSymBatch] == kBatchNegativeWorkspace)
    return -1;
  if (symbols[kSymBatch] == kBatchExtentsTooLarge)
    return 0;
  /* One float per token plus a guard word that run() also writes. */
  return symbols[kSymBatch] * symbols[kSymSeq] * (int64_t)sizeof(float) + 64;
}

/* What last_error() reports: per thread, like the generated libraries. */
static _Thread_local const char *gLastError = "";

static const char *lastError(void) { return gLastError; }

/* Dispatch state (see setIsaCap below). */
static volatile int32_t gIsaCap = ATTUNE_ISA_AVX512_SPR;
static volatile int32_t gDispatchedIsa = -1;

static int32_t run(void *const *inputs, void *const *outputs,
                   const int64_t *symbols, void *workspace,
                   const void *weights, const attune_abi_device_t *device) {
  const int32_t *ids = (const int32_t *)inputs[0];
  const uint8_t *mask = (const uint8_t *)inputs[1];
  const float *scale = (const float *)inputs[2];
  float *y = (float *)outputs[0];
  int64_t tokens = symbols[kSymBatch] * symbols[kSymSeq];
  gLastError = "";
  if (symbols[kSymBatch] == kBatchExtentsTooLarge)
    return kErrorExtentsTooLarge;
  if (device) {
    gLastError = "a CPU model's run() was given a device";
    return kErrorWrongWeights;
  }
  if (!weights || memcmp(weights, kWeights, sizeof(kWeights)) != 0) {
    gLastError = "run() was not given the model's weights";
    return kErrorWrongWeights;
  }
  if ((uintptr_t)workspace % 64 != 0) {
    gLastError = "workspace is not 64-byte aligned\n";
    return kErrorMisaligned;
  }
  if (scale[0] != scale[0]) {
    /* Ends in a newline, which the runtime must trim. */
    gLastError = "Input scale[0] is NaN\n";
    return kErrorNaNScale;
  }
  if (gDispatchedIsa < 0)
    gDispatchedIsa = gIsaCap < ATTUNE_ISA_AVX2 ? gIsaCap : ATTUNE_ISA_AVX2;
  float *staged = (float *)workspace;
  for (int64_t t = 0; t < tokens; ++t)
    staged[t] = (float)ids[t];
  /* The guard word just past the staged tokens: the last bytes promised. */
  ((volatile unsigned char *)workspace)[tokens * (int64_t)sizeof(float) + 63] =
      0xAB;
  for (int64_t t = 0; t < tokens; ++t)
    for (int d = 0; d < kWidth; ++d)
      y[t * kWidth + d] = mask[t] ? scale[d] * staged[t] : 0.0f;
  return 0;
}

static volatile int32_t gNumThreads = 0;

static void setNumThreads(int32_t numThreads) { gNumThreads = numThreads; }

/* Not part of the ABI: lets the tests see what set_num_threads forwarded. */
__attribute__((visibility("default"))) int32_t
attune_test_model_num_threads(void) {
  return gNumThreads;
}

/* The dispatch as a generated library does it, for a library with
 * variants up to AVX2: set_isa_cap lowers higher caps to AVX2, and a run
 * "dispatches" at the cap in force, after which a lower cap is refused. */

static int32_t setIsaCap(int32_t isa) {
  if (gDispatchedIsa > isa)
    return -1;
  gIsaCap = isa;
  return isa < ATTUNE_ISA_AVX2 ? isa : ATTUNE_ISA_AVX2;
}

static int32_t dispatchedIsa(void) { return gDispatchedIsa; }

/* Not part of the ABI: the library stays loaded across tests (dlclose need
 * not unload it), so a test that needs a fresh dispatch starts here. */
__attribute__((visibility("default"))) void
attune_test_model_reset_dispatch(void) {
  gIsaCap = ATTUNE_ISA_AVX512_SPR;
  gDispatchedIsa = -1;
}

static const attune_model_abi_t kAbi = {
    ATTUNE_MODEL_ABI_VERSION,
    "scale_ids",
    3,
    kInputs,
    1,
    kOutputs,
    2,
    kSymbolNames,
    kSymbolMax,
    workspaceSize,
    run,
    setNumThreads,
    "tfm.func @scale_ids(...)",
#if defined(EXTERNAL_WEIGHTS)
    NULL,
    (int64_t)sizeof(kWeights),
    ATTUNE_WEIGHTS_EXTERNAL,
    "test_model_weights.safetensors",
    0x793cdbc9355d3a76ULL, /* XXH64("weights!"), from llvm::xxHash64 */
#else
    kWeights,
    (int64_t)sizeof(kWeights),
    ATTUNE_WEIGHTS_EMBEDDED,
    NULL,
    0,
#endif
    lastError,
    setIsaCap,
    dispatchedIsa,
    0, /* no symbol sums */
    NULL,
};

__attribute__((visibility("default"))) const attune_model_abi_t *
attune_model_abi(void) {
  return &kAbi;
}
