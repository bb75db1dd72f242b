// Multi-head non-causal self-attention alone (B=1, H=12, D=128, dynamic
// sequence), as an exporter writes it. attention_benchmark compiles it twice:
// with fusion (one tfm.attention kernel) and with --no-fuse-attention.
module {
  func.func @attention_full_d128(%q: tensor<1x12x?x128xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq_q", "d"]},
                          %k: tensor<1x12x?x128xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq_k", "d"]},
                          %v: tensor<1x12x?x128xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq_k", "d"]})
      -> (tensor<1x12x?x128xf32> {tfm.name = "out"}) {
    %scores = tfm.matmul %q, %k {transpose_b = true} : tensor<1x12x?x128xf32>, tensor<1x12x?x128xf32> -> tensor<1x12x?x?xf32>
    %scale = arith.constant dense<8.838835e-02> : tensor<f32>
    %s = tfm.mul %scores, %scale : tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
    %p = tfm.softmax %s {axis = -1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
    %o = tfm.matmul %p, %v : tensor<1x12x?x?xf32>, tensor<1x12x?x128xf32> -> tensor<1x12x?x128xf32>
    return %o : tensor<1x12x?x128xf32>
  }
}
