//===- TfmBuilders.h - build tfm ops from unchecked operands ----*- C++ -*-===//
//
// The ODS builders that infer the result type abort the process when the
// operands do not fit the op (`report_fatal_error`). Frontends build ops from
// user files (config.json, safetensors, ONNX), where a wrong shape is bad
// input, not a bug; they build through `createChecked`, which reports the
// verifier's message at the op's location and returns failure instead.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_DIALECTS_TFM_TFMBUILDERS_H
#define ATTUNE_DIALECTS_TFM_TFMBUILDERS_H

#include "dialects/tfm/TfmOps.h"

#include "mlir/IR/Builders.h"

#include <type_traits>

namespace attune::tfm {

/// Creates `OpTy` at `builder`'s insertion point with its inferred result
/// type. `args` are those of the ODS builder that takes an explicit result
/// type, without that type: `createChecked<AttentionOp>(b, loc, q, k, v,
/// mask, keyPaddingMask, APFloat(0.125), /*causal=*/true)`. On operands that
/// do not fit, emits "'tfm.x' op expected ..." at `loc` and creates nothing.
template <typename OpTy, typename... Args>
llvm::FailureOr<OpTy> createChecked(mlir::OpBuilder &builder,
                                    mlir::Location loc, Args &&...args) {
  mlir::OperationState state(loc, OpTy::getOperationName());
  // Build with a placeholder result type so nothing is inferred (and nothing
  // aborts) yet; the real type replaces it below.
  OpTy::build(builder, state, builder.getNoneType(),
              std::forward<Args>(args)...);
  // A default-valued attribute passed as null (`BoolAttr()`) is filled in
  // when the op is created; inference runs before that and reads it.
  if constexpr (!std::is_same_v<typename OpTy::Properties, mlir::EmptyProperties>)
    OpTy::populateDefaultProperties(
        state.name, state.getOrAddProperties<typename OpTy::Properties>());
  llvm::SmallVector<mlir::Type, 1> types;
  if (mlir::failed(OpTy::inferReturnTypes(
          builder.getContext(), loc, state.operands,
          state.attributes.getDictionary(builder.getContext()),
          state.getRawProperties(), state.regions, types)))
    return mlir::failure();
  state.types.assign(types.begin(), types.end());
  return llvm::cast<OpTy>(builder.create(state));
}

} // namespace attune::tfm

#endif // ATTUNE_DIALECTS_TFM_TFMBUILDERS_H
