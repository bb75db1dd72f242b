//===- TfmOps.h - tfm dialect ops -------------------------------*- C++ -*-===//
#ifndef ATTUNE_DIALECTS_TFM_TFMOPS_H
#define ATTUNE_DIALECTS_TFM_TFMOPS_H

#include "compiler/support/MergedWeights.h" // WeightOp::getBlobKey
#include "compiler/support/PanelLayout.h"   // WeightOp::getBlobKey
#include "dialects/tfm/TfmDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/tfm/TfmEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "dialects/tfm/TfmAttrs.h.inc"
#define GET_OP_CLASSES
#include "dialects/tfm/TfmOps.h.inc"

#include "compiler/modifiers/ScoreModifier.h"
#include "compiler/support/KernelCatalog.h"

namespace attune::tfm {

/// A score modifier dictionary ({kind = "alibi", ...} on tfm.attention or
/// tfm.score_bias) resolved against the registry in compiler/modifiers.
struct ResolvedModifier {
  const modifiers::ScoreModifier *definition = nullptr;
  /// Every parameter, defaults filled in.
  modifiers::ModifierParams params;
};

/// Reads `dict`: finds its kind in the registry and converts its other
/// entries to numbers (booleans 0/1), without defaults or checks (those are
/// modifiers::checkModifier's). Returns "" or a message naming the problem.
std::string parseModifier(mlir::DictionaryAttr dict, ResolvedModifier &out);

/// Resolves `dict` and checks it with `operandTypes` (ranked tensors) for an
/// attention of `dims`; on failure reports through `emitError` (a message
/// naming the kind, the parameter or operand, and what was expected).
mlir::FailureOr<ResolvedModifier>
resolveModifier(mlir::DictionaryAttr dict, mlir::TypeRange operandTypes,
                const modifiers::AttentionDims &dims,
                llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Reads tfm.attention's `rope` dictionary ({base, rotary_dims, interleaved,
/// position_offset, scaling}, defaults as tfm.rope's; a missing rotary_dims is
/// `headDim`) into `out`. Checks the entries' names, types and ranges when
/// `headDim` is static (>= 0). Returns "" or a message naming the entry.
std::string readRope(mlir::DictionaryAttr dict, int64_t headDim,
                     codegen::RopeSpec &out);

/// The same parameters, of a tfm.rope op (verified).
codegen::RopeSpec ropeOf(RopeOp op);

/// `rope`'s frequency scaling as tfm.rope's `scaling` dictionary; null
/// when it has none.
mlir::DictionaryAttr ropeScalingDictionary(mlir::MLIRContext *context,
                                           const codegen::RopeSpec &rope);

/// `rope` as tfm.attention's dictionary, readRope's inverse: base and
/// rotary_dims always, interleaved, position_offset and scaling when not
/// default.
mlir::DictionaryAttr ropeDictionary(mlir::MLIRContext *context,
                                    const codegen::RopeSpec &rope);

/// True when `value` (a [B, S, H * D] tensor) is read only through reshapes
/// to rank 4 ([B, S, H, D]), each read only as the query, key or value of
/// a tfm.attention in the bshd layout. The CPU attention kernel reads such
/// operands through strides, so `value` may be a view into a wider tensor
/// (tfm.slice of a packed projection, see tfm-merge-projections) at no cost.
bool isReadOnlyAsAttentionHeads(mlir::Value value);

} // namespace attune::tfm

#endif // ATTUNE_DIALECTS_TFM_TFMOPS_H
