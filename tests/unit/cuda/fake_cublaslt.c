/*===- fake_cublaslt.c - cuBLASLt's f32 products on the host, for the tests -===*
 *
 * Exports the cuBLASLt entry points runtime/cuda/CublasLt.cpp resolves, so
 * that the runtime's whole CUDA path (runtime/cuda/ModelDevice.cpp: weights
 * uploaded, constants in the workspace, host buffers staged, the library's
 * matmul calls turned into plans) runs beside fake_cuda_driver.c, whose
 * "device memory" is host memory. It computes what cuBLASLt's documentation
 * defines, with plain loops and only for f32:
 *
 *   D = epilogue(alpha * op(A) * op(B) + beta * C)   column-major, per batch
 *
 * op(X) is X or its transpose (TRANSA, TRANSB); a layout is (rows, cols,
 * ld) with element (i, j) at i + j * ld and batch b at b * its batch
 * offset; the epilogue adds the bias (one value per row of D) and applies
 * ReLU or tanh GELU. Any other type is CUBLAS_STATUS_NOT_SUPPORTED. With
 * CUBLAS_COMPUTE_32F_FAST_16BF the operands are rounded to bf16 (nearest
 * even) before they are multiplied, as tensor cores would, and with
 * CUBLAS_COMPUTE_32F_FAST_16F to f16.
 *
 *===----------------------------------------------------------------------===*/

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int cublasStatus_t;
enum {
  kSuccess = 0,
  kAllocFailed = 3,
  kInvalidValue = 7,
  kNotSupported = 15,
};
enum { kR32F = 0 };                          /* cudaDataType_t */
enum { kComputeFast16F = 74, kComputeFast16BF = 75 }; /* cublasComputeType_t */
enum { kOpN = 0, kOpT = 1 };                 /* cublasOperation_t */
enum {                                       /* cublasLtMatmulDescAttributes_t */
  kTransA = 3,
  kTransB = 4,
  kEpilogue = 7,
  kBiasPointer = 8,
  kBiasDataType = 26,
};
enum {                                       /* cublasLtEpilogue_t */
  kDefault = 1,
  kRelu = 2,
  kBias = 4,
  kReluBias = 6,
  kGelu = 32,
  kGeluBias = 36,
};
enum { kBatchCount = 5, kBatchOffset = 6 };  /* cublasLtMatrixLayoutAttribute_t */

typedef struct {
  int transA, transB, epilogue, bf16, f16;
  const float *bias;
} Desc;
typedef struct {
  int type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;
  int64_t batchOffset;
} Layout;
typedef struct {
  uint64_t data[8];
} Algo;
typedef struct {
  Algo algo;
  size_t workspaceSize;
  int state;
  float wavesCount;
  int reserved[4];
} HeuristicResult;

static int handleStandIn;

cublasStatus_t cublasLtCreate(void **handle) {
  *handle = &handleStandIn;
  return kSuccess;
}
cublasStatus_t cublasLtDestroy(void *handle) {
  (void)handle;
  return kSuccess;
}
size_t cublasLtGetVersion(void) { return 130000; }
const char *cublasLtGetStatusString(cublasStatus_t status) {
  return status == kNotSupported ? "fake cuBLASLt: f32 only" : "fake cuBLASLt";
}

cublasStatus_t cublasLtMatmulDescCreate(Desc **desc, int computeType, int scaleType) {
  if (scaleType != kR32F)
    return kNotSupported;
  *desc = calloc(1, sizeof(Desc));
  if (!*desc)
    return kAllocFailed;
  (*desc)->epilogue = kDefault;
  (*desc)->bf16 = computeType == kComputeFast16BF;
  (*desc)->f16 = computeType == kComputeFast16F;
  return kSuccess;
}
cublasStatus_t cublasLtMatmulDescDestroy(Desc *desc) {
  free(desc);
  return kSuccess;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(Desc *desc, int attribute, const void *value,
                                              size_t bytes) {
  switch (attribute) {
  case kTransA:
    memcpy(&desc->transA, value, sizeof(int));
    return kSuccess;
  case kTransB:
    memcpy(&desc->transB, value, sizeof(int));
    return kSuccess;
  case kEpilogue:
    memcpy(&desc->epilogue, value, sizeof(int));
    return kSuccess;
  case kBiasPointer:
    memcpy(&desc->bias, value, sizeof(void *));
    return kSuccess;
  case kBiasDataType: {
    int type;
    memcpy(&type, value, sizeof type);
    return type == kR32F ? kSuccess : kNotSupported;
  }
  }
  (void)bytes;
  return kInvalidValue;
}

cublasStatus_t cublasLtMatrixLayoutCreate(Layout **layout, int type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  if (type != kR32F)
    return kNotSupported;
  if (ld < (int64_t)rows)
    return kInvalidValue;
  *layout = calloc(1, sizeof(Layout));
  if (!*layout)
    return kAllocFailed;
  **layout = (Layout){type, rows, cols, ld, 1, 0};
  return kSuccess;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(Layout *layout) {
  free(layout);
  return kSuccess;
}
cublasStatus_t cublasLtMatrixLayoutSetAttribute(Layout *layout, int attribute, const void *value,
                                                size_t bytes) {
  (void)bytes;
  if (attribute == kBatchCount)
    memcpy(&layout->batch, value, sizeof(int32_t));
  else if (attribute == kBatchOffset)
    memcpy(&layout->batchOffset, value, sizeof(int64_t));
  else
    return kInvalidValue;
  return kSuccess;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(void **preference) {
  *preference = &handleStandIn;
  return kSuccess;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(void *preference) {
  (void)preference;
  return kSuccess;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(void *preference, int attribute,
                                                    const void *value, size_t bytes) {
  (void)preference, (void)attribute, (void)value, (void)bytes;
  return kSuccess;
}

/* Whether op(a) * op(b) -> d is a product this file computes. */
static int consistent(const Desc *desc, const Layout *a, const Layout *b, const Layout *d) {
  uint64_t m = d->rows, n = d->cols;
  uint64_t aRows = desc->transA == kOpT ? a->cols : a->rows;
  uint64_t k = desc->transA == kOpT ? a->rows : a->cols;
  uint64_t bRows = desc->transB == kOpT ? b->cols : b->rows;
  uint64_t bCols = desc->transB == kOpT ? b->rows : b->cols;
  return aRows == m && bRows == k && bCols == n && a->batch == d->batch && b->batch == d->batch;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(void *handle, Desc *desc, Layout *a, Layout *b,
                                              Layout *c, Layout *d, void *preference,
                                              int requested, HeuristicResult *results,
                                              int *returned) {
  (void)handle, (void)c, (void)preference;
  *returned = 0;
  if (!consistent(desc, a, b, d))
    return kInvalidValue;
  if (requested > 0) {
    memset(&results[0], 0, sizeof results[0]);
    *returned = 1;
  }
  return kSuccess;
}

static float at(const float *base, const Layout *layout, int batch, uint64_t i, uint64_t j,
                int transposed) {
  if (transposed) {
    uint64_t t = i;
    i = j;
    j = t;
  }
  return base[batch * layout->batchOffset + (int64_t)i + (int64_t)j * layout->ld];
}

/* `v` rounded to bf16, to nearest even (finite values). */
static float bf16(float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  bits += 0x7fff + ((bits >> 16) & 1);
  bits &= 0xffff0000u;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/* `v` rounded to f16, to nearest even (the compiler's _Float16). */
static float f16(float v) { return (float)(_Float16)v; }

/* An operand as the compute type multiplies it. */
static double operand(const Desc *desc, float v) {
  return desc->bf16 ? bf16(v) : desc->f16 ? f16(v) : v;
}

cublasStatus_t cublasLtMatmul(void *handle, Desc *desc, const void *alpha, const void *a,
                              Layout *aLayout, const void *b, Layout *bLayout, const void *beta,
                              const void *c, Layout *cLayout, void *d, Layout *dLayout,
                              const Algo *algo, void *workspace, size_t workspaceBytes,
                              void *stream) {
  (void)handle, (void)algo, (void)workspace, (void)workspaceBytes, (void)stream;
  if (!consistent(desc, aLayout, bLayout, dLayout))
    return kInvalidValue;
  const float al = *(const float *)alpha, be = *(const float *)beta;
  const uint64_t m = dLayout->rows, n = dLayout->cols;
  const uint64_t k = desc->transA == kOpT ? aLayout->rows : aLayout->cols;
  const int bias = desc->epilogue == kBias || desc->epilogue == kReluBias ||
                   desc->epilogue == kGeluBias;
  if (bias && !desc->bias)
    return kInvalidValue;
  for (int t = 0; t < dLayout->batch; ++t)
    for (uint64_t j = 0; j < n; ++j)
      for (uint64_t i = 0; i < m; ++i) {
        double sum = 0;
        for (uint64_t p = 0; p < k; ++p) {
          float x = at(a, aLayout, t, i, p, desc->transA == kOpT);
          float y = at(b, bLayout, t, p, j, desc->transB == kOpT);
          sum += operand(desc, x) * operand(desc, y);
        }
        double v = al * sum;
        if (be != 0)
          v += be * at(c, cLayout, t, i, j, 0);
        if (bias)
          v += desc->bias[i];
        if (desc->epilogue == kRelu || desc->epilogue == kReluBias)
          v = v > 0 ? v : 0;
        if (desc->epilogue == kGelu || desc->epilogue == kGeluBias)
          v = 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        float *out = (float *)d;
        out[t * dLayout->batchOffset + (int64_t)i + (int64_t)j * dLayout->ld] = (float)v;
      }
  return kSuccess;
}
