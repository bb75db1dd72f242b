//===- CublasLt.h - linear layers on tensor cores through cuBLASLt -*- C++ -*-===//
//
// Halide has no tensor-core code generation in any release, so a CUDA
// library's matmuls run in cuBLASLt, loaded with dlopen like the driver.
// A LinearPlan is one shape's cuBLASLt descriptors and the algorithm its
// heuristic chose, built once (at model open) and run many times:
//
//   y[M, N] = epilogue(alpha · x[M, K] · w + b[N])          all row-major
//
// with w of shape [K, N] (attune's Linear layout) or, with
// `weightTransposed`, [N, K] (PyTorch's nn.Linear layout), for `batch`
// matrices at element strides of your choosing (a weight stride of 0 shares
// one w, and b is always shared). Attention's products are such batches:
// q·kᵀ is x = q, w = k transposed, alpha the scale; p·v is x = p, w = v;
// with grouped-query heads stored [B, H, S, D], the heads of one key/value
// head are adjacent, so a batch entry is g·S rows of q. The epilogue is
// fused into the cuBLASLt kernel: a bias, ReLU, or GELU in its tanh form,
// 0.5·v·(1 + tanh(√(2/π)·(v + 0.044715·v³))) — cuBLASLt has no erf GELU, so a
// model with erf GELU keeps the activation as its own kernel.
//
// cuBLASLt is column-major; a row-major [M, N] matrix is a column-major
// [N, M] one, so the plan computes yᵀ = wᵀ · xᵀ with w as A and x as B, and
// the bias runs along D's rows, as cuBLASLt's bias epilogue expects.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_RUNTIME_CUDA_CUBLASLT_H
#define ATTUNE_RUNTIME_CUDA_CUBLASLT_H

#include "runtime/cuda/CudaDevice.h"

#include <memory>

namespace attune::cuda {

/// Element types of x, w, b and y, and how the products are summed: F32 in
/// full fp32 (CUDA cores), TF32 fp32 data on tensor cores with inputs
/// rounded to 10-bit mantissas, BF16 and F16 data on tensor cores; every
/// type accumulates in fp32.
enum class MatmulType { F32, TF32, BF16, F16 };
enum class Epilogue { None, Bias, Relu, BiasRelu, Gelu, BiasGelu };

const char *matmulTypeName(MatmulType type);
const char *epilogueName(Epilogue epilogue);
/// Bytes per element of `type`'s data.
size_t elementBytes(MatmulType type);

/// The loaded library and one handle, with a workspace on the device.
class CublasLt {
public:
  /// Loads `path` (by default $ATTUNE_CUBLASLT, else libcublasLt.so.13 from
  /// the library path, else the toolkit's /usr/local/cuda/lib64) and creates
  /// a handle for `device`. ATTUNE_NO_DEVICE when the library does not load.
  static attune_status_t open(Device &device, std::unique_ptr<CublasLt> *out,
                              const char *path = nullptr) noexcept;
  ~CublasLt();
  CublasLt(const CublasLt &) = delete;
  CublasLt &operator=(const CublasLt &) = delete;

  /// cublasLtGetVersion(), e.g. 130100 for 13.1.0.
  size_t version() const;
  Device &device() const { return device_; }

private:
  friend class LinearPlan;
  explicit CublasLt(Device &device);
  attune_status_t check(api::cublasStatus_t status, const char *what) const noexcept;

  Device &device_;
  void *library_ = nullptr;
  struct Functions;
  std::unique_ptr<Functions> f_;
  api::cublasLtHandle_t handle_ = nullptr;
  api::CUdeviceptr workspace_ = 0;
  size_t workspaceBytes_ = 0;
};

struct LinearShape {
  int64_t m = 0, k = 0, n = 0;
  MatmulType type = MatmulType::F32;
  Epilogue epilogue = Epilogue::None;
  bool weightTransposed = false;
  /// x stored as [K, M] (a batched matmul's transpose_a).
  bool inputTransposed = false;
  /// F32 data whose products may round the operands to bf16 (or TF32) on
  /// tensor cores, accumulating in f32 (CUBLAS_COMPUTE_32F_FAST_16BF):
  /// --precision=bf16 on the GPU.
  bool bf16Products = false;
  /// The same with f16 (CUBLAS_COMPUTE_32F_FAST_16F): --precision=f16.
  bool f16Products = false;
  /// Row strides (elements) of x, w and y as stored; -1: dense (the stored
  /// row length).
  int64_t ldX = -1, ldW = -1, ldY = -1;
  /// The alignment (bytes, a power of two up to 256) every pointer the plan
  /// runs on has: cuBLASLt's heuristic assumes 256, and an algorithm chosen
  /// for that fails on a view that starts inside an allocation.
  uint32_t alignment = 256;
  /// Products scale x·w by alpha before the bias and activation.
  float alpha = 1.f;
  /// `batch` products, matrix i at x + i·batchStrideX (elements), and so on.
  /// The strides default to dense batches (m·k, k·n, m·n); batchStrideW = 0
  /// shares one weight.
  int64_t batch = 1;
  int64_t batchStrideX = -1, batchStrideW = -1, batchStrideY = -1;
  /// Which of cuBLASLt's heuristic answers the plan runs, best first, in
  /// [0, 16): 0 but where gpu_benchmark times the others against it.
  int heuristicRank = 0;
};

class LinearPlan {
public:
  /// ATTUNE_INVALID_ARGUMENT for a shape with a dimension or batch below 1
  /// or a negative stride other than the -1 defaults;
  /// ATTUNE_INTERNAL, naming the shape, when cuBLASLt has no algorithm.
  static attune_status_t create(CublasLt &lt, const LinearShape &shape,
                                std::unique_ptr<LinearPlan> *out) noexcept;
  ~LinearPlan();
  LinearPlan(const LinearPlan &) = delete;
  LinearPlan &operator=(const LinearPlan &) = delete;

  /// Enqueues the product on the device's stream (it does not wait).
  /// `bias` is read only by the Bias* epilogues; a null pointer it needs is
  /// ATTUNE_INVALID_ARGUMENT. Sets the descriptor's bias pointer, so one
  /// plan runs on one thread at a time.
  attune_status_t run(api::CUdeviceptr x, api::CUdeviceptr w, api::CUdeviceptr bias,
                      api::CUdeviceptr y) noexcept;
  const LinearShape &shape() const { return shape_; }
  /// 2·M·N·K per batch entry.
  double flops() const { return 2.0 * shape_.batch * shape_.m * shape_.n * shape_.k; }

private:
  explicit LinearPlan(CublasLt &lt) : lt_(lt) {}
  CublasLt &lt_;
  LinearShape shape_;
  api::cublasLtMatmulDesc_t desc_ = nullptr;
  api::cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  api::cublasLtMatmulAlgo_t algo_ = {};
};

} // namespace attune::cuda

#endif // ATTUNE_RUNTIME_CUDA_CUBLASLT_H
