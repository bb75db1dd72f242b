// A Transformer encoder layer with Shaw et al.'s relative position
// representations ("Self-Attention with Relative Position Representations",
// NAACL 2018), small: token embeddings scaled by sqrt(d_model) and no
// absolute position encoding (the relative terms replace it); one post-LN
// layer (LayerNorm(x + sublayer(x))) whose self-attention adds, for the
// clipped distance c = clip(j - i, -16, 16), learned vectors a^K[c] to the
// keys in the scores and a^V[c] to the values in the output (two [33, 64]
// tables per layer, shared by the heads), padded keys (`source_mask`,
// nonzero = a real token) ignored; ReLU FFN. d_model 256, 4 heads of 64,
// FFN 1024, vocabulary 1000; batch and sequence are dynamic.
//
// The attention is one tfm.attention with the `shaw` score modifier
// (compiler/modifiers/Shaw.cpp): the kernel adds q_i·a^K inside the scale
// and sum_j p_ij a^V to the output without storing either [S, S] term.
module {
  func.func @shaw_encoder(
      %ids: tensor<?x?xi32> {tfm.name = "source_ids", tfm.dim_names = ["batch", "seq"]},
      %mask: tensor<?x?xi1> {tfm.name = "source_mask", tfm.dim_names = ["batch", "seq"]})
      -> (tensor<?x?x256xf32> {tfm.name = "hidden_states"}) {
    // normal(0, d_model^-0.5): times sqrt(d_model) the rows have unit scale.
    %emb = tfm.weight "shared.weight" {std = 0.0625 : f64} : tensor<1000x256xf32>
    %tok = tfm.embedding %emb, %ids : tensor<1000x256xf32>, tensor<?x?xi32> -> tensor<?x?x256xf32>
    %sqrt_d = arith.constant dense<16.0> : tensor<f32>
    %x = tfm.mul %tok, %sqrt_d : tensor<?x?x256xf32>, tensor<f32> -> tensor<?x?x256xf32>

    %wq = tfm.weight "encoder.layers.0.self_attn.q_proj.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %q = tfm.linear %x, %wq : tensor<?x?x256xf32>, tensor<256x256xf32> -> tensor<?x?x256xf32>
    %q4 = tfm.reshape %q : tensor<?x?x256xf32> -> tensor<?x?x4x64xf32>
    %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x64xf32> -> tensor<?x4x?x64xf32>
    %wk = tfm.weight "encoder.layers.0.self_attn.k_proj.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %k = tfm.linear %x, %wk : tensor<?x?x256xf32>, tensor<256x256xf32> -> tensor<?x?x256xf32>
    %k4 = tfm.reshape %k : tensor<?x?x256xf32> -> tensor<?x?x4x64xf32>
    %kh = tfm.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x64xf32> -> tensor<?x4x?x64xf32>
    %wv = tfm.weight "encoder.layers.0.self_attn.v_proj.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %v = tfm.linear %x, %wv : tensor<?x?x256xf32>, tensor<256x256xf32> -> tensor<?x?x256xf32>
    %v4 = tfm.reshape %v : tensor<?x?x256xf32> -> tensor<?x?x4x64xf32>
    %vh = tfm.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x64xf32> -> tensor<?x4x?x64xf32>
    %rk = tfm.weight "encoder.layers.0.self_attn.relative_keys" {std = 0.5 : f64} : tensor<33x64xf32>
    %rv = tfm.weight "encoder.layers.0.self_attn.relative_values" {std = 0.5 : f64} : tensor<33x64xf32>
    %ctx = tfm.attention %qh, %kh, %vh key_padding_mask(%mask : tensor<?x?xi1>)
        modifier_operands(%rk, %rv : tensor<33x64xf32>, tensor<33x64xf32>)
        {scale = 0.125 : f64, modifiers = [{kind = "shaw", max_distance = 16 : i64}]}
        : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x64xf32>
    %ctx_t = tfm.transpose %ctx {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x4x?x64xf32> -> tensor<?x?x4x64xf32>
    %ctx_m = tfm.reshape %ctx_t : tensor<?x?x4x64xf32> -> tensor<?x?x256xf32>
    %wo = tfm.weight "encoder.layers.0.self_attn.out_proj.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %attn = tfm.linear %ctx_m, %wo : tensor<?x?x256xf32>, tensor<256x256xf32> -> tensor<?x?x256xf32>
    %r1 = tfm.add %x, %attn : tensor<?x?x256xf32>, tensor<?x?x256xf32> -> tensor<?x?x256xf32>
    %n1_g = tfm.weight "encoder.layers.0.self_attn_layer_norm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %n1_b = tfm.weight "encoder.layers.0.self_attn_layer_norm.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %x1 = tfm.layer_norm %r1, %n1_g, %n1_b {epsilon = 1.0e-06 : f64} : tensor<?x?x256xf32>, tensor<256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>

    %w1 = tfm.weight "encoder.layers.0.fc1.weight" {std = 0.06 : f64} : tensor<256x1024xf32>
    %b1 = tfm.weight "encoder.layers.0.fc1.bias" {init = #tfm.init<zeros>} : tensor<1024xf32>
    %fc = tfm.linear %x1, %w1, %b1 : tensor<?x?x256xf32>, tensor<256x1024xf32>, tensor<1024xf32> -> tensor<?x?x1024xf32>
    %act = tfm.relu %fc : tensor<?x?x1024xf32> -> tensor<?x?x1024xf32>
    %w2 = tfm.weight "encoder.layers.0.fc2.weight" {std = 0.03 : f64} : tensor<1024x256xf32>
    %b2 = tfm.weight "encoder.layers.0.fc2.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %ffn = tfm.linear %act, %w2, %b2 : tensor<?x?x1024xf32>, tensor<1024x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %r2 = tfm.add %x1, %ffn : tensor<?x?x256xf32>, tensor<?x?x256xf32> -> tensor<?x?x256xf32>
    %n2_g = tfm.weight "encoder.layers.0.final_layer_norm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %n2_b = tfm.weight "encoder.layers.0.final_layer_norm.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %out = tfm.layer_norm %r2, %n2_g, %n2_b {epsilon = 1.0e-06 : f64} : tensor<?x?x256xf32>, tensor<256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    return %out : tensor<?x?x256xf32>
  }
}
