//===- StructLayout.h - C struct layouts for generated host code -*- C++ -*-===//
//
// The host code builds halide_buffer_t values on the stack and defines the
// attune_model_abi_t descriptor; both are C structs whose layout the kernels
// and the runtime were compiled against. Instead of trusting an LLVM struct
// type to pad like the C compiler did, a CStructLayout computes the C layout
// (LP64: natural alignment, pointers 8 bytes) and builds a *packed* LLVM
// struct with explicit padding bytes, so the offsets are exactly the computed
// ones whatever the module's data layout says. Unit tests compare them with
// offsetof() of the real C declarations.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_CODEGEN_HOST_STRUCTLAYOUT_H
#define ATTUNE_COMPILER_CODEGEN_HOST_STRUCTLAYOUT_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"

#include <cstdint>
#include <vector>

namespace attune::codegen::host {

/// Scalar C field kinds (a nested struct is spelled out field by field).
enum class CField { U8, U16, I32, I64, F64, Ptr };

class CStructLayout {
public:
  CStructLayout(mlir::MLIRContext *context, llvm::ArrayRef<CField> fields);

  /// The packed LLVM struct, padding included; sizeof == size().
  mlir::LLVM::LLVMStructType type() const { return type_; }
  uint64_t offset(unsigned field) const { return offsets_[field]; }
  uint64_t size() const { return size_; }
  uint64_t alignment() const { return alignment_; }
  unsigned numFields() const { return offsets_.size(); }
  /// Position of C field `field` among the LLVM struct's members.
  int32_t memberIndex(unsigned field) const { return members_[field]; }
  mlir::Type fieldType(unsigned field) const {
    return type_.getBody()[members_[field]];
  }

  /// Address of `field` in the struct at `base`.
  mlir::Value fieldAddress(mlir::OpBuilder &builder, mlir::Location loc,
                           mlir::Value base, unsigned field) const;
  /// Stores `value` (of the field's type) into `field` of the struct at
  /// `base`.
  void store(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value base,
             unsigned field, mlir::Value value) const;
  /// Loads `field` of the struct at `base`.
  mlir::Value load(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value base,
                   unsigned field) const;
  /// `aggregate` with `field` replaced (for global initialisers).
  mlir::Value insert(mlir::OpBuilder &builder, mlir::Location loc,
                     mlir::Value aggregate, unsigned field,
                     mlir::Value value) const;

private:
  mlir::LLVM::LLVMStructType type_;
  std::vector<uint64_t> offsets_;
  std::vector<int32_t> members_;
  uint64_t size_ = 0, alignment_ = 1;
};

/// halide_dimension_t {int32 min, extent, stride; uint32 flags}.
enum HalideDimensionField { kDimMin, kDimExtent, kDimStride, kDimFlags };
CStructLayout halideDimensionLayout(mlir::MLIRContext *context);

/// halide_buffer_t (Halide 21): {uint64 device; ptr device_interface;
/// ptr host; uint64 flags; {uint8 code; uint8 bits; uint16 lanes} type;
/// int32 dimensions; ptr dim; ptr padding}.
enum HalideBufferField {
  kBufDevice,
  kBufDeviceInterface,
  kBufHost,
  kBufFlags,
  kBufTypeCode,
  kBufTypeBits,
  kBufTypeLanes,
  kBufDimensions,
  kBufDim,
  kBufPadding
};
CStructLayout halideBufferLayout(mlir::MLIRContext *context);

/// attune_abi_tensor_t (runtime.h).
enum AbiTensorField { kTensorName, kTensorDType, kTensorRank, kTensorDims, kTensorIndexBound };
CStructLayout abiTensorLayout(mlir::MLIRContext *context);

/// attune_model_abi_t (runtime.h).
enum ModelAbiField {
  kAbiVersion,
  kAbiName,
  kAbiNumInputs,
  kAbiInputs,
  kAbiNumOutputs,
  kAbiOutputs,
  kAbiNumSymbols,
  kAbiSymbolNames,
  kAbiSymbolMax,
  kAbiWorkspaceSize,
  kAbiRun,
  kAbiSetNumThreads,
  kAbiSourceIR,
  kAbiWeights,
  kAbiWeightsSize,
  kAbiWeightsStorage,
  kAbiWeightsFile,
  kAbiWeightsHash,
  kAbiLastError,
  kAbiSetIsaCap,
  kAbiDispatchedIsa,
  kAbiNumSymbolSums,
  kAbiSymbolSums,
  kAbiDevice,
  kAbiConstants,
  kAbiConstantsSize,
  kAbiReleaseDevice
};
CStructLayout modelAbiLayout(mlir::MLIRContext *context);

/// attune_abi_device_t (runtime.h).
enum AbiDeviceField {
  kDeviceContext,
  kDeviceStream,
  kDeviceMatmul,
  kDeviceUser,
  kDeviceMark,
  kDeviceAttention
};
CStructLayout abiDeviceLayout(mlir::MLIRContext *context);

/// attune_abi_attention_t (runtime.h).
enum AbiAttentionField {
  kAttentionImage,
  kAttentionKernel,
  kAttentionCombine,
  kAttentionHeadDim,
  kAttentionValueDim,
  kAttentionCausal,
  kAttentionHasMask,
  kAttentionHasKeyPadding,
  kAttentionRotaryDims,
  kAttentionRopeTheta,
  kAttentionRopeOffset,
  kAttentionScale,
  kAttentionSoftcap,
  kAttentionBiasSlopes,
  kAttentionBiasAbsolute,
  kAttentionDeltaLow,
  kAttentionDeltaHigh,
  kAttentionHasBiasTable,
  kAttentionBiasRowLow,
  kAttentionBiasRowCount,
  kAttentionBiasRows
};
CStructLayout abiAttentionLayout(mlir::MLIRContext *context);

/// attune_abi_matmul_t (runtime.h).
enum AbiMatmulField {
  kMatmulKind,
  kMatmulTransposeA,
  kMatmulTransposeB,
  kMatmulHasBias,
  kMatmulActivation,
  kMatmulProducts
};
CStructLayout abiMatmulLayout(mlir::MLIRContext *context);

/// attune_abi_symbol_sum_t (runtime.h).
enum AbiSymbolSumField { kSumSymbol, kSumNumTerms, kSumTerms, kSumConstant };
CStructLayout abiSymbolSumLayout(mlir::MLIRContext *context);

} // namespace attune::codegen::host

#endif // ATTUNE_COMPILER_CODEGEN_HOST_STRUCTLAYOUT_H
