// RUN: attune-opt %s -split-input-file -tfm-pack-weights | FileCheck %s
// RUN: attune-opt %s -split-input-file -tfm-pack-weights=panel-width=32 | FileCheck %s --check-prefix=W32
// RUN: not attune-opt %s -split-input-file -tfm-pack-weights=panel-width=-1 2>&1 | FileCheck %s --check-prefix=BAD-WIDTH
// RUN: attune-opt %s -split-input-file -tfm-pack-weights=bf16=true | FileCheck %s --check-prefix=BF16

// BAD-WIDTH: error: tfm-pack-weights: panel-width must be in [1, 1024] (0: the CPU's), got -1

/// Without a width the CPU's: 16 columns for f32 (the AVX-512 linear reads
/// three panels side by side), 96 for bf16 pair panels.

/// A linear's weight is stored as the GEMM's panels: the layout shows in the
/// weight's type; the linear, its bias and its result are as they were.
// CHECK-LABEL: func.func @linear
// CHECK: %[[W:.+]] = tfm.weight "fc.weight" {transpose} : tensor<384x1536xf32, #tfm.panels<16>>
// CHECK: %[[B:.+]] = tfm.weight "fc.bias" : tensor<1536xf32>
// CHECK: tfm.linear %arg0, %[[W]], %[[B]] : tensor<?x?x384xf32>, tensor<384x1536xf32, #tfm.panels<16>>, tensor<1536xf32> -> tensor<?x?x1536xf32>
// W32: tfm.weight "fc.weight" {transpose} : tensor<384x1536xf32, #tfm.panels<32>>
/// --precision=bf16: the same panels, stored as bf16 pairs.
// BF16: tfm.weight "fc.weight" {transpose} : tensor<384x1536xf32, #tfm.panels<96, bf16>>
// BF16: tfm.linear %arg0, %{{.+}}, %{{.+}} : tensor<?x?x384xf32>, tensor<384x1536xf32, #tfm.panels<96, bf16>>, tensor<1536xf32>
func.func @linear(%x: tensor<?x?x384xf32>) -> tensor<?x?x1536xf32> {
  %w = tfm.weight "fc.weight" {transpose} : tensor<384x1536xf32>
  %b = tfm.weight "fc.bias" : tensor<1536xf32>
  %y = tfm.linear %x, %w, %b : tensor<?x?x384xf32>, tensor<384x1536xf32>, tensor<1536xf32> -> tensor<?x?x1536xf32>
  return %y : tensor<?x?x1536xf32>
}

// -----

/// One packed weight serves every linear that reads it.
// CHECK-LABEL: func.func @shared
// CHECK-COUNT-1: tfm.weight "w" : tensor<8x100xf32, #tfm.panels<16>>
// CHECK-NOT: tfm.weight
func.func @shared(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x100xf32>, tensor<4x100xf32>) {
  %w = tfm.weight "w" : tensor<8x100xf32>
  %a = tfm.linear %x, %w : tensor<4x8xf32>, tensor<8x100xf32> -> tensor<4x100xf32>
  %b = tfm.linear %y, %w : tensor<4x8xf32>, tensor<8x100xf32> -> tensor<4x100xf32>
  return %a, %b : tensor<4x100xf32>, tensor<4x100xf32>
}

// -----

/// A weight another op also reads (tied embeddings: the lookup table and,
/// transposed, the output projection's weight) keeps its plain form for that
/// op and gets a packed twin for the linear.
// CHECK-LABEL: func.func @tied
// CHECK-DAG: %[[T:.+]] = tfm.weight "wte" : tensor<50x16xf32>
// CHECK-DAG: %[[P:.+]] = tfm.weight "wte" : tensor<50x16xf32, #tfm.panels<16>>
// CHECK: tfm.embedding %[[T]], %arg0
// CHECK: tfm.linear %{{.+}}, %[[P]]
func.func @tied(%ids: tensor<1x?xi64>, %h: tensor<1x?x50xf32>) -> (tensor<1x?x16xf32>, tensor<1x?x16xf32>) {
  %t = tfm.weight "wte" : tensor<50x16xf32>
  %e = tfm.embedding %t, %ids : tensor<50x16xf32>, tensor<1x?xi64> -> tensor<1x?x16xf32>
  %y = tfm.linear %h, %t : tensor<1x?x50xf32>, tensor<50x16xf32> -> tensor<1x?x16xf32>
  return %e, %y : tensor<1x?x16xf32>, tensor<1x?x16xf32>
}

// -----

/// negative: only f32 weights are packed (the GEMM widens f16 and bf16 as it
/// copies them), and only weights: an activation as the right operand stays.
// CHECK-LABEL: func.func @negative_not_packed
// CHECK-NOT: #tfm.panels
func.func @negative_not_packed(%x: tensor<4x8xf16>, %a: tensor<4x8xf32>, %b: tensor<8x8xf32>) -> (tensor<4x8xf16>, tensor<4x8xf32>) {
  %w = tfm.weight "w16" : tensor<8x8xf16>
  %y = tfm.linear %x, %w : tensor<4x8xf16>, tensor<8x8xf16> -> tensor<4x8xf16>
  %z = tfm.linear %a, %b : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  return %y, %z : tensor<4x8xf16>, tensor<4x8xf32>
}
