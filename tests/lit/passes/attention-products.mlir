// RUN: attune-opt %s -split-input-file -tfm-attention-products | FileCheck %s
// RUN: attune-opt %s -split-input-file -tfm-attention-products=type=f16 | FileCheck %s --check-prefix=F16
// RUN: not attune-opt %s -split-input-file -tfm-attention-products=type=f8 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: tfm-attention-products: type must be bf16 or f16, got 'f8'
// F16: tfm.attention %arg0, %arg1, %arg2 {causal = true, product_type = f16, scale = 1.250000e-01 : f64}
// F16: tfm.attention %arg0, %arg1, %arg2 mask(%arg3 : tensor<1x1x1x?xf32>) {product_type = f16, scale = 1.250000e-01 : f64}

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
