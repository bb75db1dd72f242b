//===- Passes.td - tfm passes ------------------------------*- tablegen -*-===//
#ifndef ATTUNE_PASSES_PASSES_TD
#define ATTUNE_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

// Passes are added here, one per file (FuseAttention.cpp, ...).

#endif // ATTUNE_PASSES_PASSES_TD
