/*===- broken_model.c - model libraries with one defect each -------------===//
 *
 * Compiled once per BROKEN_* variant (see CMakeLists.txt); each library has
 * a descriptor that is valid except for one field, so a test can check that
 * the runtime rejects it with a message naming that field.
 *
 *===----------------------------------------------------------------------===*/

#include "attune/runtime.h"

#include <stddef.h>

#if defined(BROKEN_SYMBOL_INDEX)
static const int64_t kDims[] = {-5, 4}; /* symbol 4 of 1 */
#else
static const int64_t kDims[] = {-1, 4};
#endif
static const int64_t kOutDims[] = {-1, 4};

static int64_t workspaceSize(const int64_t *symbols) {
  (void)symbols;
  return 0;
}
/* Unused in the variants that leave it out of the descriptor. */
__attribute__((unused)) static int32_t
run(void *const *inputs, void *const *outputs, const int64_t *symbols,
    void *workspace, const void *weights, const attune_abi_device_t *device) {
  (void)inputs, (void)outputs, (void)symbols, (void)workspace, (void)weights, (void)device;
  return 0;
}
static void setNumThreads(int32_t numThreads) { (void)numThreads; }
__attribute__((unused)) static const char *lastError(void) { return ""; }
__attribute__((unused)) static int32_t setIsaCap(int32_t isa) { return isa; }
static int32_t dispatchedIsa(void) { return -1; }

#if defined(BROKEN_RANK)
#define INPUT_RANK 99
#else
#define INPUT_RANK 2
#endif
#if defined(BROKEN_DTYPE)
#define INPUT_DTYPE 42
#else
#define INPUT_DTYPE ATTUNE_DTYPE_F32
#endif
#if defined(BROKEN_INDEX_BOUND)
#define INPUT_INDEX_BOUND 100 /* on an f32 input */
#else
#define INPUT_INDEX_BOUND 0
#endif

static const attune_abi_tensor_t kInputs[] = {
    {"x", INPUT_DTYPE, INPUT_RANK, kDims, INPUT_INDEX_BOUND},
};
static const attune_abi_tensor_t kOutputs[] = {
    {"y", ATTUNE_DTYPE_F32, 2, kOutDims, 0},
};
#if defined(BROKEN_UNBOUND_SYMBOL)
static const char *const kSymbolNames[] = {"n", "orphan"};
static const int64_t kSymbolMax[] = {-1, -1};
#define NUM_SYMBOLS 2
#elif defined(BROKEN_SYMBOL_SUM)
/* "total" = n + symbol 2, which does not exist. */
static const char *const kSymbolNames[] = {"n", "total"};
static const int64_t kSymbolMax[] = {-1, -1};
#define NUM_SYMBOLS 2
static const int32_t kSumTerms[] = {0, 2};
static const attune_abi_symbol_sum_t kSums[] = {{1, 2, kSumTerms, 0}};
#else
static const char *const kSymbolNames[] = {"n"};
static const int64_t kSymbolMax[] = {-1};
#define NUM_SYMBOLS 1
#endif

__attribute__((unused)) static const attune_model_abi_t kAbi = {
#if defined(BROKEN_VERSION)
    ATTUNE_MODEL_ABI_VERSION + 1,
#else
    ATTUNE_MODEL_ABI_VERSION,
#endif
    "broken",
#if defined(BROKEN_COUNT)
    5000,
#else
    1,
#endif
    kInputs,
    1,
    kOutputs,
    NUM_SYMBOLS,
    kSymbolNames,
    kSymbolMax,
    workspaceSize,
#if defined(BROKEN_NULL_RUN)
    NULL,
#else
    run,
#endif
    setNumThreads,
    "",
    NULL,
#if defined(BROKEN_WEIGHTS_STORAGE)
    16,
    7, /* neither embedded nor external */
    NULL,
    0,
#elif defined(BROKEN_WEIGHTS_FILE)
    16,
    ATTUNE_WEIGHTS_EXTERNAL,
    "../elsewhere.safetensors", /* a path, not a base name */
    0,
#else
    0,
    ATTUNE_WEIGHTS_EMBEDDED,
    NULL,
    0,
#endif
#if defined(BROKEN_NULL_LAST_ERROR)
    NULL,
#else
    lastError,
#endif
#if defined(BROKEN_NULL_SET_ISA_CAP)
    NULL,
#else
    setIsaCap,
#endif
    dispatchedIsa,
#if defined(BROKEN_SYMBOL_SUM)
    1,
    kSums,
#else
    0,
    NULL,
#endif
#if defined(BROKEN_DEVICE)
    5, /* neither cpu nor cuda */
#elif defined(BROKEN_CUDA_NO_RELEASE)
    ATTUNE_ABI_DEVICE_CUDA, /* and release_device below is NULL */
#else
    ATTUNE_ABI_DEVICE_CPU,
#endif
    NULL,
#if defined(BROKEN_CONSTANTS)
    64, /* bytes at a NULL address */
#else
    0,
#endif
    NULL,
};

#if !defined(BROKEN_NO_SYMBOL)
__attribute__((visibility("default"))) const attune_model_abi_t *
attune_model_abi(void) {
#if defined(BROKEN_NULL_DESCRIPTOR)
  return NULL;
#else
  return &kAbi;
#endif
}
#else
/* Exports something, just not the ABI symbol. */
__attribute__((visibility("default"))) const attune_model_abi_t *
not_attune_model_abi(void) {
  return &kAbi;
}
#endif
