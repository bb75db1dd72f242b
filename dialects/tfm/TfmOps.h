//===- TfmOps.h - tfm dialect ops -------------------------------*- C++ -*-===//
#ifndef ATTUNE_DIALECTS_TFM_TFMOPS_H
#define ATTUNE_DIALECTS_TFM_TFMOPS_H

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

#endif // ATTUNE_DIALECTS_TFM_TFMOPS_H
