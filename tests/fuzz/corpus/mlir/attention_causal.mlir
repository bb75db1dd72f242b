module {
  func.func @attention_causal(%q: tensor<1x12x?x64xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq_q", "d"]},
                          %k: tensor<1x12x?x64xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq_k", "d"]},
                          %v: tensor<1x12x?x64xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq_k", "d"]})
      -> (tensor<1x12x?x64xf32> {tfm.name = "out"}) {
    %scores = tfm.matmul %q, %k {transpose_b = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x?xf32>
    %scale = arith.constant dense<1.250000e-01> : tensor<f32>
    %s = tfm.mul %scores, %scale : tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
    %m = tfm.causal_mask %s : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %o = tfm.matmul %p, %v : tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    return %o : tensor<1x12x?x64xf32>
  }
}
