//===- CublasLt.cpp - linear layers on tensor cores through cuBLASLt ------===//

#include "runtime/cuda/CublasLt.h"

#include "runtime/src/Status.h"

#include <cstdlib>
#include <dlfcn.h>
#include <new>
#include <string>

namespace attune::cuda {

using runtime::fail;
using namespace api;

namespace {

/// What NVIDIA suggests for Hopper; enough for every algorithm on Ampere.
constexpr size_t kWorkspaceBytes = 32u << 20;

/// The most answers a plan asks cuBLASLt's heuristic for (LinearShape::
/// heuristicRank).
constexpr int kMostHeuristicAnswers = 16;

int dataType(MatmulType type) {
  switch (type) {
  case MatmulType::BF16:
    return CUDA_R_16BF;
  case MatmulType::F16:
    return CUDA_R_16F;
  case MatmulType::F32:
  case MatmulType::TF32:
    return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

int epilogueValue(Epilogue epilogue) {
  switch (epilogue) {
  case Epilogue::None:
    return CUBLASLT_EPILOGUE_DEFAULT;
  case Epilogue::Bias:
    return CUBLASLT_EPILOGUE_BIAS;
  case Epilogue::Relu:
    return CUBLASLT_EPILOGUE_RELU;
  case Epilogue::BiasRelu:
    return CUBLASLT_EPILOGUE_RELU_BIAS;
  case Epilogue::Gelu:
    return CUBLASLT_EPILOGUE_GELU;
  case Epilogue::BiasGelu:
    return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

bool hasBias(Epilogue epilogue) {
  return epilogue == Epilogue::Bias || epilogue == Epilogue::BiasRelu ||
         epilogue == Epilogue::BiasGelu;
}

} // namespace

const char *matmulTypeName(MatmulType type) {
  switch (type) {
  case MatmulType::F32:
    return "f32";
  case MatmulType::TF32:
    return "tf32";
  case MatmulType::BF16:
    return "bf16";
  case MatmulType::F16:
    return "f16";
  }
  return "?";
}

const char *epilogueName(Epilogue epilogue) {
  switch (epilogue) {
  case Epilogue::None:
    return "none";
  case Epilogue::Bias:
    return "bias";
  case Epilogue::Relu:
    return "relu";
  case Epilogue::BiasRelu:
    return "bias_relu";
  case Epilogue::Gelu:
    return "gelu";
  case Epilogue::BiasGelu:
    return "bias_gelu";
  }
  return "?";
}

size_t elementBytes(MatmulType type) {
  return type == MatmulType::BF16 || type == MatmulType::F16 ? 2 : 4;
}

struct CublasLt::Functions {
#define ATTUNE_CUBLASLT_FUNCTIONS(X)                                                               \
  X(cublasLtCreate)                                                                                \
  X(cublasLtDestroy)                                                                               \
  X(cublasLtGetVersion)                                                                            \
  X(cublasLtGetStatusString)                                                                       \
  X(cublasLtMatmulDescCreate)                                                                      \
  X(cublasLtMatmulDescDestroy)                                                                     \
  X(cublasLtMatmulDescSetAttribute)                                                                \
  X(cublasLtMatrixLayoutCreate)                                                                    \
  X(cublasLtMatrixLayoutDestroy)                                                                   \
  X(cublasLtMatrixLayoutSetAttribute)                                                              \
  X(cublasLtMatmulPreferenceCreate)                                                                \
  X(cublasLtMatmulPreferenceDestroy)                                                               \
  X(cublasLtMatmulPreferenceSetAttribute)                                                          \
  X(cublasLtMatmulAlgoGetHeuristic)                                                                \
  X(cublasLtMatmul)
#define ATTUNE_DECLARE(name) api::name##_t name = nullptr;
  ATTUNE_CUBLASLT_FUNCTIONS(ATTUNE_DECLARE)
#undef ATTUNE_DECLARE
};

CublasLt::CublasLt(Device &device) : device_(device) {}

attune_status_t CublasLt::check(cublasStatus_t status, const char *what) const noexcept {
  if (status == CUBLAS_STATUS_SUCCESS)
    return ATTUNE_OK;
  const char *text = f_->cublasLtGetStatusString(status);
  return fail(ATTUNE_INTERNAL, "%s failed: cublasStatus %d (%s)", what, status,
              text ? text : "no description");
}

attune_status_t CublasLt::open(Device &device, std::unique_ptr<CublasLt> *out,
                               const char *path) noexcept {
  if (!path)
    path = std::getenv("ATTUNE_CUBLASLT");
  std::string tried;
  void *library = nullptr;
  const char *candidates[] = {path, "libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.13"};
  for (const char *candidate : candidates) {
    if (!candidate || !*candidate)
      continue;
    if ((library = dlopen(candidate, RTLD_NOW | RTLD_LOCAL)))
      break;
    tried += std::string(tried.empty() ? "" : "; ") + dlerror();
    if (candidate == path)
      break; // a path the caller named is the only one to try
  }
  if (!library)
    return fail(ATTUNE_NO_DEVICE, "cuBLASLt does not load (set ATTUNE_CUBLASLT to its path): %s",
                tried.c_str());
  std::unique_ptr<CublasLt> lt(new (std::nothrow) CublasLt(device));
  if (lt)
    lt->f_.reset(new (std::nothrow) Functions);
  if (!lt || !lt->f_) {
    dlclose(library);
    return fail(ATTUNE_OUT_OF_MEMORY, "out of memory");
  }
  lt->library_ = library;
#define ATTUNE_RESOLVE(name)                                                                       \
  lt->f_->name = reinterpret_cast<api::name##_t>(dlsym(library, #name));                           \
  if (!lt->f_->name)                                                                               \
    return fail(ATTUNE_NO_DEVICE, "cuBLASLt has no %s", #name);
  ATTUNE_CUBLASLT_FUNCTIONS(ATTUNE_RESOLVE)
#undef ATTUNE_RESOLVE
  {
    Device::Scope scope(device);
    if (attune_status_t status = lt->check(lt->f_->cublasLtCreate(&lt->handle_), "cublasLtCreate"))
      return status;
  }
  if (attune_status_t status = device.alloc(kWorkspaceBytes, &lt->workspace_))
    return status;
  lt->workspaceBytes_ = kWorkspaceBytes;
  *out = std::move(lt);
  return ATTUNE_OK;
}

CublasLt::~CublasLt() {
  device_.free(workspace_);
  if (handle_) {
    Device::Scope scope(device_);
    f_->cublasLtDestroy(handle_);
  }
  if (library_)
    dlclose(library_);
}

size_t CublasLt::version() const { return f_->cublasLtGetVersion(); }

attune_status_t LinearPlan::create(CublasLt &lt, const LinearShape &shape,
                                   std::unique_ptr<LinearPlan> *out) noexcept {
  if (shape.m < 1 || shape.k < 1 || shape.n < 1 || shape.batch < 1)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "linear of shape M=%lld K=%lld N=%lld batch=%lld: every dimension and the batch "
                "must be at least 1",
                (long long)shape.m, (long long)shape.k, (long long)shape.n, (long long)shape.batch);
  if (shape.batchStrideX < -1 || shape.batchStrideW < -1 || shape.batchStrideY < -1)
    return fail(ATTUNE_INVALID_ARGUMENT, "linear batch strides must be -1 (dense) or at least 0");
  // A stored row is K (or M) elements of x, N (or K) of w, N of y.
  const int64_t rowX = shape.inputTransposed ? shape.m : shape.k;
  const int64_t rowW = shape.weightTransposed ? shape.k : shape.n;
  if ((shape.ldX != -1 && shape.ldX < rowX) || (shape.ldW != -1 && shape.ldW < rowW) ||
      (shape.ldY != -1 && shape.ldY < shape.n))
    return fail(ATTUNE_INVALID_ARGUMENT,
                "linear row strides x=%lld w=%lld y=%lld are shorter than the rows they hold "
                "(%lld, %lld, %lld)",
                (long long)shape.ldX, (long long)shape.ldW, (long long)shape.ldY,
                (long long)rowX, (long long)rowW, (long long)shape.n);
  if (shape.alignment == 0 || shape.alignment > 256 ||
      (shape.alignment & (shape.alignment - 1)) != 0)
    return fail(ATTUNE_INVALID_ARGUMENT, "linear alignment %u is not a power of two up to 256",
                shape.alignment);
  if (shape.heuristicRank < 0 || shape.heuristicRank >= kMostHeuristicAnswers)
    return fail(ATTUNE_INVALID_ARGUMENT, "heuristic rank %d is outside [0, %d)",
                shape.heuristicRank, kMostHeuristicAnswers);
  std::unique_ptr<LinearPlan> plan(new (std::nothrow) LinearPlan(lt));
  if (!plan)
    return fail(ATTUNE_OUT_OF_MEMORY, "out of memory");
  plan->shape_ = shape;
  LinearShape &s = plan->shape_;
  if (s.batchStrideX < 0)
    s.batchStrideX = s.m * s.k;
  if (s.batchStrideW < 0)
    s.batchStrideW = s.k * s.n;
  if (s.batchStrideY < 0)
    s.batchStrideY = s.m * s.n;
  if (s.ldX < 0)
    s.ldX = rowX;
  if (s.ldW < 0)
    s.ldW = rowW;
  if (s.ldY < 0)
    s.ldY = s.n;
  const CublasLt::Functions &f = *lt.f_;
  if ((shape.bf16Products || shape.f16Products) && shape.type != MatmulType::F32)
    return fail(ATTUNE_INVALID_ARGUMENT, "%s products are for f32 data, not %s",
                shape.bf16Products ? "bf16" : "f16", matmulTypeName(shape.type));
  if (shape.bf16Products && shape.f16Products)
    return fail(ATTUNE_INVALID_ARGUMENT, "products are bf16 or f16, not both");
  const int compute = shape.type == MatmulType::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                      : shape.bf16Products           ? CUBLAS_COMPUTE_32F_FAST_16BF
                      : shape.f16Products            ? CUBLAS_COMPUTE_32F_FAST_16F
                                                     : CUBLAS_COMPUTE_32F;
  const int type = dataType(shape.type);
  if (attune_status_t status = lt.check(f.cublasLtMatmulDescCreate(&plan->desc_, compute, CUDA_R_32F),
                                        "cublasLtMatmulDescCreate"))
    return status;
  // A = w as column-major [N, K]: w[K, N] row-major is exactly that (ld N);
  // w[N, K] row-major is a column-major [K, N] to transpose (ld K). B = x the
  // same way: x[M, K] is a column-major [K, M], x[K, M] one to transpose.
  const int transA = shape.weightTransposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int transB = shape.inputTransposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int epilogue = epilogueValue(shape.epilogue);
  auto set = [&](int attribute, const void *value, size_t bytes) {
    return lt.check(f.cublasLtMatmulDescSetAttribute(plan->desc_, attribute, value, bytes),
                    "cublasLtMatmulDescSetAttribute");
  };
  if (attune_status_t status = set(CUBLASLT_MATMUL_DESC_TRANSA, &transA, sizeof transA))
    return status;
  if (attune_status_t status = set(CUBLASLT_MATMUL_DESC_TRANSB, &transB, sizeof transB))
    return status;
  if (attune_status_t status = set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue))
    return status;
  if (hasBias(shape.epilogue))
    if (attune_status_t status = set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof type))
      return status;
  auto layout = [&](cublasLtMatrixLayout_t *to, uint64_t rows, uint64_t cols, int64_t ld,
                    int64_t batchStride) {
    if (attune_status_t status =
            lt.check(f.cublasLtMatrixLayoutCreate(to, type, rows, cols, ld),
                     "cublasLtMatrixLayoutCreate"))
      return status;
    if (s.batch == 1)
      return ATTUNE_OK;
    const int32_t count = static_cast<int32_t>(s.batch);
    if (attune_status_t status = lt.check(
            f.cublasLtMatrixLayoutSetAttribute(*to, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                               sizeof count),
            "cublasLtMatrixLayoutSetAttribute(batch count)"))
      return status;
    return lt.check(f.cublasLtMatrixLayoutSetAttribute(
                        *to, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batchStride,
                        sizeof batchStride),
                    "cublasLtMatrixLayoutSetAttribute(batch stride)");
  };
  const uint64_t m = shape.m, k = shape.k, n = shape.n;
  if (attune_status_t status = shape.weightTransposed
                                  ? layout(&plan->a_, k, n, s.ldW, s.batchStrideW)
                                  : layout(&plan->a_, n, k, s.ldW, s.batchStrideW))
    return status;
  if (attune_status_t status = shape.inputTransposed
                                  ? layout(&plan->b_, m, k, s.ldX, s.batchStrideX)
                                  : layout(&plan->b_, k, m, s.ldX, s.batchStrideX))
    return status;
  if (attune_status_t status = layout(&plan->d_, n, m, s.ldY, s.batchStrideY))
    return status;

  cublasLtMatmulPreference_t preference = nullptr;
  if (attune_status_t status =
          lt.check(f.cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate"))
    return status;
  // The heuristic's answers, best first; the plan takes the one at
  // heuristicRank (0 but when gpu_benchmark times the others).
  cublasLtMatmulHeuristicResult_t results[kMostHeuristicAnswers] = {};
  const int wanted = shape.heuristicRank + 1;
  int found = 0;
  cublasStatus_t heuristic = f.cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &lt.workspaceBytes_,
      sizeof lt.workspaceBytes_);
  for (int attribute :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (heuristic == CUBLAS_STATUS_SUCCESS)
      heuristic = f.cublasLtMatmulPreferenceSetAttribute(preference, attribute, &shape.alignment,
                                                         sizeof shape.alignment);
  if (heuristic == CUBLAS_STATUS_SUCCESS) {
    Device::Scope scope(lt.device_);
    heuristic = f.cublasLtMatmulAlgoGetHeuristic(lt.handle_, plan->desc_, plan->a_, plan->b_,
                                                 plan->d_, plan->d_, preference, wanted, results,
                                                 &found);
  }
  f.cublasLtMatmulPreferenceDestroy(preference);
  if (attune_status_t status = lt.check(heuristic, "cublasLtMatmulAlgoGetHeuristic"))
    return status;
  if (found == 0)
    return fail(ATTUNE_INTERNAL,
                "cuBLASLt has no algorithm for a %s linear M=%lld K=%lld N=%lld batch=%lld with "
                "epilogue %s",
                matmulTypeName(shape.type), (long long)m, (long long)k, (long long)n,
                (long long)s.batch, epilogueName(shape.epilogue));
  if (found <= shape.heuristicRank)
    return fail(ATTUNE_INVALID_ARGUMENT,
                "cuBLASLt has %d algorithm%s for this %s linear, so none of rank %d", found,
                found == 1 ? "" : "s", matmulTypeName(shape.type), shape.heuristicRank);
  plan->algo_ = results[shape.heuristicRank].algo;
  *out = std::move(plan);
  return ATTUNE_OK;
}

LinearPlan::~LinearPlan() {
  const CublasLt::Functions &f = *lt_.f_;
  if (a_)
    f.cublasLtMatrixLayoutDestroy(a_);
  if (b_)
    f.cublasLtMatrixLayoutDestroy(b_);
  if (d_)
    f.cublasLtMatrixLayoutDestroy(d_);
  if (desc_)
    f.cublasLtMatmulDescDestroy(desc_);
}

attune_status_t LinearPlan::run(CUdeviceptr x, CUdeviceptr w, CUdeviceptr bias,
                                CUdeviceptr y) noexcept {
  const CublasLt::Functions &f = *lt_.f_;
  if (!x || !w || !y)
    return fail(ATTUNE_INVALID_ARGUMENT, "linear M=%lld K=%lld N=%lld: a null %s pointer",
                (long long)shape_.m, (long long)shape_.k, (long long)shape_.n,
                !x ? "input" : !w ? "weight" : "output");
  if (hasBias(shape_.epilogue)) {
    if (!bias)
      return fail(ATTUNE_INVALID_ARGUMENT, "linear with epilogue %s needs a bias",
                  epilogueName(shape_.epilogue));
    const void *pointer = reinterpret_cast<const void *>(bias);
    if (attune_status_t status = lt_.check(
            f.cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &pointer,
                                             sizeof pointer),
            "cublasLtMatmulDescSetAttribute(bias)"))
      return status;
  }
  const float alpha = shape_.alpha, beta = 0.f;
  auto pointer = [](CUdeviceptr p) { return reinterpret_cast<void *>(p); };
  Device::Scope scope(lt_.device_);
  return lt_.check(f.cublasLtMatmul(lt_.handle_, desc_, &alpha, pointer(w), a_, pointer(x), b_,
                                    &beta, pointer(y), d_, pointer(y), d_, &algo_,
                                    pointer(lt_.workspace_), lt_.workspaceBytes_,
                                    lt_.device_.stream()),
                   "cublasLtMatmul");
}

} // namespace attune::cuda
