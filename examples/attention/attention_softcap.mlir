// Causal self-attention with Gemma 2's logit softcapping (B=1, H=12, D=64,
// dynamic sequence), as an exporter writes it: the scaled scores capped by
// 50 * tanh(s / 50), then the causal mask. attention_benchmark compiles it
// the default way (tfm-fuse-attention makes the cap the fused op's softcap)
// and with --no-fuse-attention (every op as written).
module {
  func.func @attention_softcap(%q: tensor<1x12x?x64xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
      %k: tensor<1x12x?x64xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq", "d"]},
      %v: tensor<1x12x?x64xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq", "d"]})
      -> (tensor<1x12x?x64xf32> {tfm.name = "out"}) {
    %s = tfm.matmul %q, %k {transpose_b = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x?xf32>
    %scale = arith.constant dense<1.250000e-01> : tensor<f32>
    %t = tfm.mul %s, %scale : tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
    %cap = arith.constant dense<5.000000e+01> : tensor<f32>
    %d = tfm.div %t, %cap : tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
    %h = tfm.tanh %d : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %c = tfm.mul %h, %cap : tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
    %m = tfm.causal_mask %c : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %p = tfm.softmax %m {axis = -1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %o = tfm.matmul %p, %v : tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    return %o : tensor<1x12x?x64xf32>
  }
}
