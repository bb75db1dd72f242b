func.func @several_masks(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %bias: tensor<1x4x8x8xf32>, %cond: tensor<1x1x8x8xi1>, %kpm: tensor<2x8xi1>) -> tensor<2x4x8x16xf32> {
  %s = tfm.matmul %q, %k {transpose_b = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<2.500000e-01> : tensor<f32>
  %t = tfm.mul %s, %c : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %b = tfm.add %t, %bias : tensor<2x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %kc = tfm.reshape %kpm : tensor<2x8xi1> -> tensor<2x1x1x8xi1>
  %kp = tfm.where %kc, %b, %ninf : tensor<2x1x1x8xi1>, tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %cm = tfm.causal_mask %kp : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %mf = tfm.where %cond, %ninf, %cm : tensor<1x1x8x8xi1>, tensor<f32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %p = tfm.softmax %mf {axis = -1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %o = tfm.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}
