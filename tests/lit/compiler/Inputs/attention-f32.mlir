// An f32 attention for attention-bf16.mlir's --precision=bf16 runs.
func.func @attn(%q: tensor<1x4x?x128xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "s", "d"]},
                %k: tensor<1x4x?x128xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "s", "d"]},
                %v: tensor<1x4x?x128xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "s", "d"]})
    -> (tensor<1x4x?x128xf32> {tfm.name = "o"}) {
  %0 = tfm.attention %q, %k, %v {scale = 0.088388 : f64, causal = true}
      : tensor<1x4x?x128xf32>, tensor<1x4x?x128xf32>, tensor<1x4x?x128xf32> -> tensor<1x4x?x128xf32>
  return %0 : tensor<1x4x?x128xf32>
}
