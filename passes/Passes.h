//===- Passes.h - tfm passes ------------------------------------*- C++ -*-===//
#ifndef ATTUNE_PASSES_PASSES_H
#define ATTUNE_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"

namespace attune {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Registers every attune pass with the global registry (for attune-opt).
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace attune

#endif // ATTUNE_PASSES_PASSES_H
