//===- TfmDialect.h - tfm dialect -------------------------------*- C++ -*-===//
#ifndef ATTUNE_DIALECTS_TFM_TFMDIALECT_H
#define ATTUNE_DIALECTS_TFM_TFMDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "dialects/tfm/TfmDialect.h.inc"

#endif // ATTUNE_DIALECTS_TFM_TFMDIALECT_H
