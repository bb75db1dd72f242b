// Causal self-attention with rotary position embeddings as LLaMA applies
// them (Su et al. 2021; split halves, base 10000, every dimension rotated).
// B=1, H=12, D=64, dynamic sequence. attention_benchmark compiles it fused
// (q and k rotated in the kernel as each tile is loaded) and with
// --no-fuse-attention (tfm.rope on q and k, then the stored S x S scores).
module {
  func.func @attention_rope(%q: tensor<1x12x?x64xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
                            %k: tensor<1x12x?x64xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq", "d"]},
                            %v: tensor<1x12x?x64xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq", "d"]})
      -> (tensor<1x12x?x64xf32> {tfm.name = "out"}) {
    %o = tfm.attention %q, %k, %v {scale = 0.125 : f64, causal = true, rope = {base = 10000.0 : f64, rotary_dims = 64 : i64}}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    return %o : tensor<1x12x?x64xf32>
  }
}
