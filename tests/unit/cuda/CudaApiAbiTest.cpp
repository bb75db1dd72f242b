//===- CudaApiAbiTest.cpp - CudaApi.h against the CUDA toolkit's headers --===//
//
// runtime/cuda/CudaApi.h declares the driver and cuBLASLt entry points the
// runtime dlopens, so that the runtime builds without the toolkit. Here,
// where the toolkit is installed, every constant, struct and signature there
// is compared with cuda.h's and cublasLt.h's. Signatures are compared as the
// ABI sees them: an enum as its underlying integer, and a pointer to any
// struct (the opaque handles) as void *.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaApi.h"

#include <cublasLt.h>
#include <cuda.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cxxabi.h>
#include <cstdlib>
#include <typeinfo>
#include <string>
#include <type_traits>

namespace api = attune::cuda::api;

namespace {

/// T as the ABI passes it.
template <typename T, bool = std::is_enum_v<T>> struct Scalar {
  using type = T;
};
// An enum passes as its underlying integer; cuda.h's are unsigned int or
// int depending on their values, which the ABI does not tell apart.
template <typename T> struct Scalar<T, true> {
  using type = std::make_signed_t<std::underlying_type_t<T>>;
};
template <typename T> struct Abi {
  using type = typename Scalar<T>::type;
};
template <typename T> struct Abi<T *> {
  using type = std::conditional_t<std::is_class_v<std::remove_const_t<T>>, void *,
                                  typename Abi<T>::type *>;
};
template <typename F> struct AbiFunction;
template <typename R, typename... Args> struct AbiFunction<R (*)(Args...)> {
  using type = typename Abi<R>::type (*)(typename Abi<Args>::type...);
};
template <typename F> using AbiOf = typename AbiFunction<F>::type;

// cuda.h's CUresult and friends are enums of int.
static_assert(std::is_same_v<std::underlying_type_t<CUresult>, unsigned> ||
              std::is_same_v<std::underlying_type_t<CUresult>, int>);

/// "ours: T, toolkit's: U", demangled, for a failing signature.
template <typename Ours, typename Theirs> std::string both() {
  auto name = [](const std::type_info &info) {
    int status = 0;
    char *demangled = abi::__cxa_demangle(info.name(), nullptr, nullptr, &status);
    std::string out = status == 0 ? demangled : info.name();
    std::free(demangled);
    return out;
  };
  return "ours: " + name(typeid(Ours)) + ", the toolkit's: " + name(typeid(Theirs));
}

#define ATTUNE_STRING(x) #x
#define ATTUNE_EXPANDED_STRING(x) ATTUNE_STRING(x)

TEST(CudaApiAbi, DriverSignaturesAndSymbols) {
  // Each name resolves, through cuda.h's #defines, to the symbol
  // DriverFunctions.inc loads, with the signature CudaApi.h gives it.
  int checked = 0;
#define ATTUNE_CUDA_DRIVER_FUNCTION(name, symbol)                                                 \
  EXPECT_EQ(std::string(ATTUNE_EXPANDED_STRING(name)), symbol);                                    \
  EXPECT_TRUE((std::is_same_v<AbiOf<api::name##_t>, AbiOf<decltype(&name)>>))                       \
      << #name << ": " << both<AbiOf<api::name##_t>, AbiOf<decltype(&name)>>();                    \
  ++checked;
#include "runtime/cuda/DriverFunctions.inc"
#undef ATTUNE_CUDA_DRIVER_FUNCTION
  EXPECT_GT(checked, 20);
}

TEST(CudaApiAbi, CublasLtSignatures) {
#define ATTUNE_CHECK(name)                                                                         \
  EXPECT_TRUE((std::is_same_v<AbiOf<api::name##_t>, AbiOf<decltype(&::name)>>))                     \
      << #name << ": " << both<AbiOf<api::name##_t>, AbiOf<decltype(&::name)>>();
  ATTUNE_CHECK(cublasLtCreate)
  ATTUNE_CHECK(cublasLtDestroy)
  ATTUNE_CHECK(cublasLtGetVersion)
  ATTUNE_CHECK(cublasLtGetStatusString)
  ATTUNE_CHECK(cublasLtMatmulDescCreate)
  ATTUNE_CHECK(cublasLtMatmulDescDestroy)
  ATTUNE_CHECK(cublasLtMatmulDescSetAttribute)
  ATTUNE_CHECK(cublasLtMatrixLayoutCreate)
  ATTUNE_CHECK(cublasLtMatrixLayoutDestroy)
  ATTUNE_CHECK(cublasLtMatrixLayoutSetAttribute)
  ATTUNE_CHECK(cublasLtMatmulPreferenceCreate)
  ATTUNE_CHECK(cublasLtMatmulPreferenceDestroy)
  ATTUNE_CHECK(cublasLtMatmulPreferenceSetAttribute)
  ATTUNE_CHECK(cublasLtMatmulAlgoGetHeuristic)
  ATTUNE_CHECK(cublasLtMatmul)
#undef ATTUNE_CHECK
}

TEST(CudaApiAbi, Constants) {
  EXPECT_EQ(api::CUDA_SUCCESS, CUDA_SUCCESS);
  EXPECT_EQ(api::CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(api::CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(api::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  EXPECT_EQ(api::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  EXPECT_EQ(api::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  EXPECT_EQ(api::CU_STREAM_NON_BLOCKING, unsigned(CU_STREAM_NON_BLOCKING));
  EXPECT_EQ(api::CU_EVENT_DEFAULT, unsigned(CU_EVENT_DEFAULT));
  EXPECT_EQ(api::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  EXPECT_TRUE((std::is_same_v<api::CUdeviceptr, CUdeviceptr>));
  EXPECT_TRUE((std::is_same_v<api::CUdevice, CUdevice>));
  EXPECT_TRUE((std::is_same_v<api::CUmodule, CUmodule>));
  EXPECT_TRUE((std::is_same_v<api::CUfunction, CUfunction>));

  EXPECT_EQ(api::CUBLAS_STATUS_SUCCESS, CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(api::CUDA_R_32F, CUDA_R_32F);
  EXPECT_EQ(api::CUDA_R_16F, CUDA_R_16F);
  EXPECT_EQ(api::CUDA_R_16BF, CUDA_R_16BF);
  EXPECT_EQ(api::CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F);
  EXPECT_EQ(api::CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F_FAST_TF32);
  EXPECT_EQ(api::CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_COMPUTE_32F_FAST_16BF);
  EXPECT_EQ(api::CUBLAS_OP_N, CUBLAS_OP_N);
  EXPECT_EQ(api::CUBLAS_OP_T, CUBLAS_OP_T);
  EXPECT_EQ(api::CUBLASLT_MATMUL_DESC_TRANSA, CUBLASLT_MATMUL_DESC_TRANSA);
  EXPECT_EQ(api::CUBLASLT_MATMUL_DESC_TRANSB, CUBLASLT_MATMUL_DESC_TRANSB);
  EXPECT_EQ(api::CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_MATMUL_DESC_EPILOGUE);
  EXPECT_EQ(api::CUBLASLT_MATMUL_DESC_BIAS_POINTER, CUBLASLT_MATMUL_DESC_BIAS_POINTER);
  EXPECT_EQ(api::CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE);
  EXPECT_EQ(api::CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(api::CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_RELU);
  EXPECT_EQ(api::CUBLASLT_EPILOGUE_BIAS, CUBLASLT_EPILOGUE_BIAS);
  EXPECT_EQ(api::CUBLASLT_EPILOGUE_RELU_BIAS, CUBLASLT_EPILOGUE_RELU_BIAS);
  EXPECT_EQ(api::CUBLASLT_EPILOGUE_GELU, CUBLASLT_EPILOGUE_GELU);
  EXPECT_EQ(api::CUBLASLT_EPILOGUE_GELU_BIAS, CUBLASLT_EPILOGUE_GELU_BIAS);
  EXPECT_EQ(api::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
  EXPECT_EQ(api::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
            CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
  EXPECT_EQ(api::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
            CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
  EXPECT_EQ(api::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES);
  EXPECT_EQ(api::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES);
  EXPECT_EQ(api::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES);
  EXPECT_EQ(api::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES);
}

TEST(CudaApiAbi, Structs) {
  EXPECT_EQ(sizeof(api::cublasLtMatmulAlgo_t), sizeof(cublasLtMatmulAlgo_t));
  EXPECT_EQ(sizeof(api::cublasLtMatmulHeuristicResult_t), sizeof(cublasLtMatmulHeuristicResult_t));
  EXPECT_EQ(offsetof(api::cublasLtMatmulHeuristicResult_t, workspaceSize),
            offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
  EXPECT_EQ(offsetof(api::cublasLtMatmulHeuristicResult_t, state),
            offsetof(cublasLtMatmulHeuristicResult_t, state));
  EXPECT_EQ(offsetof(api::cublasLtMatmulHeuristicResult_t, wavesCount),
            offsetof(cublasLtMatmulHeuristicResult_t, wavesCount));
}

} // namespace
