// Encoder self-attention over a padded batch (BERT with Hugging Face's
// attention_mask): keys whose mask entry is 0 are ignored. B=1, H=12, D=64,
// dynamic sequence; the [1, S] key padding mask is an input.
// attention_benchmark compiles it fused (the mask read per key block) and
// with --no-fuse-attention (reshape, where -inf, on the stored scores).
module {
  func.func @attention_padding(%q: tensor<1x12x?x64xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
                               %k: tensor<1x12x?x64xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq", "d"]},
                               %v: tensor<1x12x?x64xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq", "d"]},
                               %pad: tensor<1x?xi1> {tfm.name = "attention_mask", tfm.dim_names = ["b", "seq"]})
      -> (tensor<1x12x?x64xf32> {tfm.name = "out"}) {
    %o = tfm.attention %q, %k, %v key_padding_mask(%pad : tensor<1x?xi1>) {scale = 0.125 : f64}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    return %o : tensor<1x12x?x64xf32>
  }
}
