// RUN: attune-opt %s -split-input-file -tfm-bf16-attention | FileCheck %s

/// An attention on f32 tensors gets bf16 products, whatever else it carries
/// (the kernel decides what runs on AMX); one on bf16 tensors multiplies in
/// bf16 already and is left as it is, as is one already marked.
// CHECK-LABEL: func.func @f32_attention
// CHECK: tfm.attention %arg0, %arg1, %arg2 {causal = true, product_type = bf16, scale = 1.250000e-01 : f64}
func.func @f32_attention(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>) -> tensor<1x12x?x64xf32> {
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64, causal = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return %0 : tensor<1x12x?x64xf32>
}

// -----

// CHECK-LABEL: func.func @masked_attention
// CHECK: tfm.attention %arg0, %arg1, %arg2 mask(%arg3 : tensor<1x1x1x?xf32>) {product_type = bf16, scale = 1.250000e-01 : f64}
func.func @masked_attention(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>, %m: tensor<1x1x1x?xf32>) -> tensor<1x12x?x64xf32> {
  %0 = tfm.attention %q, %k, %v mask(%m : tensor<1x1x1x?xf32>) {scale = 0.125 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return %0 : tensor<1x12x?x64xf32>
}

// -----

// CHECK-LABEL: func.func @bf16_attention
// CHECK: tfm.attention %arg0, %arg1, %arg2 {scale = 1.250000e-01 : f64} :
// CHECK-NOT: product_type
func.func @bf16_attention(%q: tensor<1x12x?x64xbf16>, %k: tensor<1x12x?x64xbf16>, %v: tensor<1x12x?x64xbf16>) -> tensor<1x12x?x64xbf16> {
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64} : tensor<1x12x?x64xbf16>, tensor<1x12x?x64xbf16>, tensor<1x12x?x64xbf16> -> tensor<1x12x?x64xbf16>
  return %0 : tensor<1x12x?x64xbf16>
}
