// RUN: not attune-compile %s -o %t.so 2>&1 | FileCheck %s
// RUN: not attune-compile %s --emit=mlir 2>&1 | FileCheck %s

/// What the library's C API cannot describe is refused right after parsing,
/// at the argument or result it concerns, before any kernel is built (it
/// used to surface as "the linked library ... does not open: invalid model
/// descriptor"). Every problem is reported, not only the first.

// CHECK-DAG: signature.mlir:[[@LINE+13]]:{{[0-9]+}}: error: inputs 0 and 1 are both named 'x': the library's API finds tensors by name
// CHECK-DAG: signature.mlir:[[@LINE+13]]:{{[0-9]+}}: error: input 'rank9' has rank 9 ('tensor<1x1x1x1x1x1x1x1x1xf32>'); the library's API describes at most 8 dimensions (ATTUNE_MAX_RANK)
// CHECK-DAG: signature.mlir:[[@LINE+13]]:{{[0-9]+}}: error: input 'double' has element type 'f64', which the library's API has no dtype for
// CHECK-DAG: signature.mlir:[[@LINE+13]]:{{[0-9]+}}: error: input 'huge' of type 'tensor<65536x65536xf32>' has more than 2147483647 elements in its static dimensions
// CHECK-DAG: error: outputs 0 and 1 are both named 'y'
// CHECK-DAG: error: cannot compile '{{.*}}signature.mlir' (see the errors above)
// CHECK-NOT: does not open
// CHECK-NOT: Stack dump
// CHECK-NOT: LLVM ERROR

module {
  func.func @signature(
      %a: tensor<?x4xf32> {tfm.name = "x"},
      %b: tensor<?x4xf32> {tfm.name = "x"},
      %c: tensor<1x1x1x1x1x1x1x1x1xf32> {tfm.name = "rank9"},
      %d: tensor<4xf64> {tfm.name = "double"},
      %e: tensor<65536x65536xf32> {tfm.name = "huge"})
      -> (tensor<?x4xf32> {tfm.name = "y"}, tensor<?x4xf32> {tfm.name = "y"}) {
    %r = tfm.relu %a : tensor<?x4xf32> -> tensor<?x4xf32>
    %s = tfm.relu %b : tensor<?x4xf32> -> tensor<?x4xf32>
    return %r, %s : tensor<?x4xf32>, tensor<?x4xf32>
  }
}
