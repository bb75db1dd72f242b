// RUN: attune-opt %s -split-input-file -verify-diagnostics
// RUN: not attune-compile %s -o %t.so 2>&1 | FileCheck %s

/// A weight whose bytes cannot be materialised is a verifier error naming
/// the weight, its type and its size, at its location (it used to be "LLVM
/// ERROR: out of memory" and a stack dump, exit 134).

// CHECK: weight-size.mlir:[[@LINE+4]]:{{[0-9]+}}: error: 'tfm.weight' op weight 'w' of type 'tensor<4x1099511627776xf32>' has 4398046511104 elements (17592186044416 bytes)
// CHECK-NOT: Stack dump
func.func @unused_huge_weight(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{weight 'w' of type 'tensor<4x1099511627776xf32>' has 4398046511104 elements (17592186044416 bytes); a tensor holds at most 2147483647 elements}}
  %w = tfm.weight "w" : tensor<4x1099511627776xf32>
  %a = tfm.relu %x : tensor<?x4xf32> -> tensor<?x4xf32>
  return %a : tensor<?x4xf32>
}

// -----

/// Sizes are multiplied with overflow checks.
func.func @overflowing_weight() {
  // expected-error @+1 {{has more elements than int64 counts}}
  %w = tfm.weight "w" : tensor<4294967296x4294967296xf32>
  return
}
