//===- CudaApi.h - the CUDA driver and cuBLASLt entry points attune calls -===//
//
// attune's GPU runtime loads the CUDA driver (libcuda.so.1) and cuBLASLt
// (libcublasLt.so.13) with dlopen, so that a library built for CUDA loads on
// a machine without either and says so through a status instead of failing
// to load. This header declares the few types, constants and function
// signatures it resolves, with the values of CUDA 13's cuda.h, cublasLt.h,
// cublas_api.h and library_types.h, so that the runtime builds without the
// toolkit. tests/unit/cuda/CudaApiAbiTest.cpp checks every value and
// signature here against the toolkit's headers wherever they are installed.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_RUNTIME_CUDA_CUDAAPI_H
#define ATTUNE_RUNTIME_CUDA_CUDAAPI_H

#include <cstddef>
#include <cstdint>

// The driver's handles are pointers to these structs at global scope, as in
// cuda.h, so that the signatures below are cuda.h's exactly.
struct CUctx_st;
struct CUstream_st;
struct CUevent_st;
struct CUmod_st;
struct CUfunc_st;

namespace attune::cuda::api {

// --- The driver API (cuda.h); the _v2 entry points are the current ones.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = ::CUctx_st *;
using CUstream = ::CUstream_st *;
using CUevent = ::CUevent_st *;
using CUmodule = ::CUmod_st *;
using CUfunction = ::CUfunc_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;
// CUfunction_attribute: the dynamic shared memory a kernel may be launched
// with; above 48 KiB a launch must raise it first.
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

using cuInit_t = CUresult (*)(unsigned flags);
using cuDriverGetVersion_t = CUresult (*)(int *version);
using cuDeviceGetCount_t = CUresult (*)(int *count);
using cuDeviceGet_t = CUresult (*)(CUdevice *device, int ordinal);
using cuDeviceGetName_t = CUresult (*)(char *name, int length, CUdevice device);
using cuDeviceGetAttribute_t = CUresult (*)(int *value, int attribute, CUdevice device);
using cuDeviceTotalMem_t = CUresult (*)(size_t *bytes, CUdevice device);
using cuDevicePrimaryCtxRetain_t = CUresult (*)(CUcontext *context, CUdevice device);
using cuDevicePrimaryCtxRelease_t = CUresult (*)(CUdevice device);
using cuCtxPushCurrent_t = CUresult (*)(CUcontext context);
using cuCtxPopCurrent_t = CUresult (*)(CUcontext *context);
using cuStreamCreate_t = CUresult (*)(CUstream *stream, unsigned flags);
using cuStreamDestroy_t = CUresult (*)(CUstream stream);
using cuStreamSynchronize_t = CUresult (*)(CUstream stream);
using cuMemAlloc_t = CUresult (*)(CUdeviceptr *pointer, size_t bytes);
using cuMemFree_t = CUresult (*)(CUdeviceptr pointer);
using cuMemcpyHtoDAsync_t = CUresult (*)(CUdeviceptr to, const void *from, size_t bytes,
                                         CUstream stream);
using cuMemcpyDtoHAsync_t = CUresult (*)(void *to, CUdeviceptr from, size_t bytes,
                                         CUstream stream);
using cuMemcpyDtoDAsync_t = CUresult (*)(CUdeviceptr to, CUdeviceptr from, size_t bytes,
                                         CUstream stream);
using cuMemsetD8Async_t = CUresult (*)(CUdeviceptr to, unsigned char value, size_t bytes,
                                       CUstream stream);
using cuEventCreate_t = CUresult (*)(CUevent *event, unsigned flags);
using cuEventDestroy_t = CUresult (*)(CUevent event);
using cuEventRecord_t = CUresult (*)(CUevent event, CUstream stream);
using cuEventSynchronize_t = CUresult (*)(CUevent event);
using cuEventElapsedTime_t = CUresult (*)(float *milliseconds, CUevent start, CUevent end);
using cuModuleLoadData_t = CUresult (*)(CUmodule *module, const void *image);
using cuModuleUnload_t = CUresult (*)(CUmodule module);
using cuModuleGetFunction_t = CUresult (*)(CUfunction *function, CUmodule module,
                                           const char *name);
using cuFuncSetAttribute_t = CUresult (*)(CUfunction function, int attribute, int value);
using cuLaunchKernel_t = CUresult (*)(CUfunction function, unsigned gridX, unsigned gridY,
                                      unsigned gridZ, unsigned blockX, unsigned blockY,
                                      unsigned blockZ, unsigned sharedBytes, CUstream stream,
                                      void **params, void **extra);
using cuGetErrorName_t = CUresult (*)(CUresult error, const char **name);
using cuGetErrorString_t = CUresult (*)(CUresult error, const char **text);

// --- cuBLASLt (cublasLt.h, cublas_api.h, library_types.h).
using cublasStatus_t = int;
using cublasLtHandle_t = struct cublasLtContext *;
using cublasLtMatmulDesc_t = struct cublasLtMatmulDescOpaque *;
using cublasLtMatrixLayout_t = struct cublasLtMatrixLayoutOpaque *;
using cublasLtMatmulPreference_t = struct cublasLtMatmulPreferenceOpaque *;

struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
// cudaDataType_t
constexpr int CUDA_R_32F = 0;
constexpr int CUDA_R_16F = 2;
constexpr int CUDA_R_16BF = 14;
// cublasComputeType_t
constexpr int CUBLAS_COMPUTE_32F = 68;
constexpr int CUBLAS_COMPUTE_32F_FAST_16F = 74;
constexpr int CUBLAS_COMPUTE_32F_FAST_16BF = 75;
constexpr int CUBLAS_COMPUTE_32F_FAST_TF32 = 77;
// cublasOperation_t
constexpr int CUBLAS_OP_N = 0;
constexpr int CUBLAS_OP_T = 1;
// cublasLtMatmulDescAttributes_t
constexpr int CUBLASLT_MATMUL_DESC_TRANSA = 3;
constexpr int CUBLASLT_MATMUL_DESC_TRANSB = 4;
constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE = 7;
constexpr int CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8;
constexpr int CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26;
// cublasLtEpilogue_t
constexpr int CUBLASLT_EPILOGUE_DEFAULT = 1;
constexpr int CUBLASLT_EPILOGUE_RELU = 2;
constexpr int CUBLASLT_EPILOGUE_BIAS = 4;
constexpr int CUBLASLT_EPILOGUE_RELU_BIAS = 6;
constexpr int CUBLASLT_EPILOGUE_GELU = 32;
constexpr int CUBLASLT_EPILOGUE_GELU_BIAS = 36;
// cublasLtMatrixLayoutAttribute_t
constexpr int CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5;
constexpr int CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6;
// cublasLtMatmulPreferenceAttributes_t
constexpr int CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1;
constexpr int CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5;
constexpr int CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6;
constexpr int CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7;
constexpr int CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8;

using cublasLtCreate_t = cublasStatus_t (*)(cublasLtHandle_t *handle);
using cublasLtDestroy_t = cublasStatus_t (*)(cublasLtHandle_t handle);
using cublasLtGetVersion_t = size_t (*)();
using cublasLtGetStatusString_t = const char *(*)(cublasStatus_t status);
using cublasLtMatmulDescCreate_t = cublasStatus_t (*)(cublasLtMatmulDesc_t *desc, int computeType,
                                                      int scaleType);
using cublasLtMatmulDescDestroy_t = cublasStatus_t (*)(cublasLtMatmulDesc_t desc);
using cublasLtMatmulDescSetAttribute_t = cublasStatus_t (*)(cublasLtMatmulDesc_t desc, int attribute,
                                                            const void *value, size_t bytes);
using cublasLtMatrixLayoutCreate_t = cublasStatus_t (*)(cublasLtMatrixLayout_t *layout, int type,
                                                        uint64_t rows, uint64_t cols, int64_t ld);
using cublasLtMatrixLayoutDestroy_t = cublasStatus_t (*)(cublasLtMatrixLayout_t layout);
using cublasLtMatrixLayoutSetAttribute_t = cublasStatus_t (*)(cublasLtMatrixLayout_t layout,
                                                              int attribute, const void *value,
                                                              size_t bytes);
using cublasLtMatmulPreferenceCreate_t = cublasStatus_t (*)(cublasLtMatmulPreference_t *pref);
using cublasLtMatmulPreferenceDestroy_t = cublasStatus_t (*)(cublasLtMatmulPreference_t pref);
using cublasLtMatmulPreferenceSetAttribute_t = cublasStatus_t (*)(cublasLtMatmulPreference_t pref,
                                                                  int attribute, const void *value,
                                                                  size_t bytes);
using cublasLtMatmulAlgoGetHeuristic_t = cublasStatus_t (*)(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t *results,
    int *returned);
using cublasLtMatmul_t = cublasStatus_t (*)(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *a,
    cublasLtMatrixLayout_t aLayout, const void *b, cublasLtMatrixLayout_t bLayout,
    const void *beta, const void *c, cublasLtMatrixLayout_t cLayout, void *d,
    cublasLtMatrixLayout_t dLayout, const cublasLtMatmulAlgo_t *algo, void *workspace,
    size_t workspaceBytes, CUstream stream);

} // namespace attune::cuda::api

#endif // ATTUNE_RUNTIME_CUDA_CUDAAPI_H
