//===- HostCodegen.h - kernel graph to LLVM-dialect host code ---*- C++ -*-===//
//
// Turns the model function (tfm ops, after the graph passes) into host code
// in MLIR's LLVM dialect: one call per kernel in program order, buffers laid
// out by a static memory plan over a caller-provided workspace, and the
// library descriptor (runtime.h's attune_model_abi_t) the runtime reads.
//
// The generated module refers to these external symbols, which the compile
// driver links in:
//   - one C function per kernel, named KernelSpec::symbolName(), taking one
//     halide_buffer_t* per kernelSignature() argument and returning int;
//   - `halide_set_num_threads` from the Halide runtime;
//   - the byte array `attune_weights_data` (the safetensors blob, 64-byte
//     aligned, `weightsSize` bytes) when the model has weights and embeds
//     them. Only the descriptor refers to it: the host code reads weights
//     through run()'s `weights` argument, which the runtime points at this
//     array or at its mapping of an external weights file.
// A CUDA library's host code (HostLoweringOptions::cuda) also calls
// `attune_cuda_enter`, `attune_cuda_release` (runtime/model/cuda_support.c)
// and `halide_cuda_device_interface` from the Halide runtime, and calls no
// kernel symbol for a linear or a batched matmul.
// It defines `attune_model_abi` (ATTUNE_MODEL_ABI_SYMBOL), the only symbol a
// generated library exports.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_CODEGEN_HOST_HOSTCODEGEN_H
#define ATTUNE_COMPILER_CODEGEN_HOST_HOSTCODEGEN_H

#include "compiler/support/IsaDispatch.h"
#include "compiler/support/KernelCatalog.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace attune::codegen {

struct HostLoweringOptions {
  /// The model's name in the descriptor (defaults to the function's name).
  std::string modelName;
  /// Name of the function to compile; empty picks the only public func.
  std::string entry;
  /// The safetensors blob of the model's weights (from materializeWeights);
  /// the lowering resolves each tfm.weight to an offset inside it.
  llvm::StringRef weightsBlob;
  /// Empty: the library embeds weightsBlob. Otherwise the base name of the
  /// file that holds it (the driver writes the file); the descriptor records
  /// that name, the blob's size and its XXH64 instead of the bytes. A model
  /// without weights embeds its (empty) blob whatever this says.
  std::string externalWeightsFile;
  /// The tfm IR as given to the compiler, embedded for reference checks.
  std::string sourceIR;
  /// How the library caps its kernels' run-time dispatch at an ATTUNE_CPU
  /// level (computeIsaDispatch for the variants the kernels are built
  /// with). Empty: no variant is ever refused and every cap is reported as
  /// the level the kernels run at.
  IsaDispatchTable isaDispatch;
  /// Generate host code for a CUDA library (runtime.h's
  /// ATTUNE_ABI_DEVICE_CUDA): every buffer a device address, Halide kernels
  /// compiled for the GPU, linears and batched matmuls handed to the
  /// runtime's cuBLASLt (attune_abi_device_t::matmul), embedded tensors
  /// copied to the device workspace, and the support code of
  /// runtime/model/cuda_support.c.
  bool cuda = false;
  /// CUDA: the type the runtime may round the linears' and batched
  /// matmuls' operands to on tensor cores: BF16 (ATTUNE_ABI_PRODUCTS_BF16,
  /// --precision=bf16) or F16 (ATTUNE_ABI_PRODUCTS_F16, --precision=f16);
  /// F32: exact.
  ScalarType matmulProducts = ScalarType::F32;
};

struct HostLoweringResult {
  /// Every distinct kernel the host code calls, in order of first use.
  std::vector<KernelSpec> kernels;
  /// Human-readable memory plan (one line per buffer: value, slot, size
  /// expression), for --dump-phases-to and tests.
  std::string memoryPlan;
  /// The model's name as the descriptor records it (the option, or the
  /// entry function's name), which the static archive's symbol is made from.
  std::string modelName;
};

/// The model function of `module`: `entry` by name, else the only public
/// definition. Emits an error on the module and returns null when there is
/// no such function (or several candidates and no `entry`). The driver asks
/// it too, so --graph draws the function host code generation compiles.
mlir::func::FuncOp findModelFunction(mlir::ModuleOp module,
                                     llvm::StringRef entry);

/// Checks what the library's C API must describe of `func`'s inputs and
/// outputs, so that a model it cannot describe fails at its source
/// location before anything is built: distinct names (the API looks tensors
/// up by them), rank <= ATTUNE_MAX_RANK, an element type the API has, and
/// static dims and element counts a kernel can address (int32). Emits one
/// error per problem.
mlir::LogicalResult checkModelSignature(mlir::func::FuncOp func);

/// Replaces the model function in `module` by LLVM-dialect host code.
/// Emits an error on the offending op (and fails) for anything it cannot
/// lower: an op without a kernel, a dynamic dimension not bound to any input
/// dimension, softmax not over the last axis, ...
mlir::LogicalResult lowerModelToHost(mlir::ModuleOp module,
                                     const HostLoweringOptions &options,
                                     HostLoweringResult &result);

} // namespace attune::codegen

#endif // ATTUNE_COMPILER_CODEGEN_HOST_HOSTCODEGEN_H
