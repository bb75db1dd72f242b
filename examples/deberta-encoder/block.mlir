// A DeBERTa-v2/v3-style encoder layer (He et al., "DeBERTa", ICLR 2021, as
// Hugging Face's DebertaV2Model computes it), small: no absolute position
// at all (position_biased_input = false); token embeddings, their layer
// norm and the padding mask applied to them; one post-LN layer whose
// self-attention is disentangled: besides q_i·k_j, a content-to-position
// term q_i·K^r and a position-to-content term k_j·Q^r over 32 relative
// position buckets each side (position_buckets 32, log-spaced past 16 up
// to max_relative_positions 128), all scaled by 1/sqrt(3·64). K^r and Q^r
// are the layer norm of the shared relative embeddings [2·32, 256] through
// this layer's own key and query projections (share_att_key), split into
// heads: [64, 4, 64]. Padded keys (`attention_mask`, nonzero = a real
// token) are ignored. GELU FFN. d_model 256, 4 heads of 64, FFN 1024,
// vocabulary 1000; batch and sequence are dynamic.
//
// The attention is one tfm.attention with the `deberta` score modifier
// (compiler/modifiers/Deberta.cpp); its kernel computes the c2p and p2c
// terms tile by tile and never stores the [B, H, S, S] scores.
module {
  func.func @deberta_encoder(
      %ids: tensor<?x?xi32> {tfm.name = "input_ids", tfm.dim_names = ["batch", "seq"]},
      %mask: tensor<?x?xi1> {tfm.name = "attention_mask", tfm.dim_names = ["batch", "seq"]})
      -> (tensor<?x?x256xf32> {tfm.name = "hidden_states"}) {
    %wte = tfm.weight "embeddings.word_embeddings.weight" : tensor<1000x256xf32>
    %tok = tfm.embedding %wte, %ids : tensor<1000x256xf32>, tensor<?x?xi32> -> tensor<?x?x256xf32>
    %e_g = tfm.weight "embeddings.LayerNorm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %e_b = tfm.weight "embeddings.LayerNorm.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %emb = tfm.layer_norm %tok, %e_g, %e_b {epsilon = 1.0e-07 : f64} : tensor<?x?x256xf32>, tensor<256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    // embeddings * mask.unsqueeze(2): padded positions start from zero.
    %keep = tfm.reshape %mask : tensor<?x?xi1> -> tensor<?x?x1xi1>
    %zero = arith.constant dense<0.0> : tensor<f32>
    %x = tfm.where %keep, %emb, %zero : tensor<?x?x1xi1>, tensor<?x?x256xf32>, tensor<f32> -> tensor<?x?x256xf32>

    // The relative embeddings, normalised once per model (norm_rel_ebd).
    %rel_w = tfm.weight "encoder.rel_embeddings.weight" : tensor<64x256xf32>
    %rel_g = tfm.weight "encoder.LayerNorm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %rel_b = tfm.weight "encoder.LayerNorm.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %rel = tfm.layer_norm %rel_w, %rel_g, %rel_b {epsilon = 1.0e-07 : f64} : tensor<64x256xf32>, tensor<256xf32>, tensor<256xf32> -> tensor<64x256xf32>

    // Self-attention: q/k/v with bias; the same q and k projections map the
    // relative embeddings to query_pos and key_pos.
    %wq = tfm.weight "encoder.layer.0.attention.self.query_proj.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %bq = tfm.weight "encoder.layer.0.attention.self.query_proj.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %q = tfm.linear %x, %wq, %bq : tensor<?x?x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %q4 = tfm.reshape %q : tensor<?x?x256xf32> -> tensor<?x?x4x64xf32>
    %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x64xf32> -> tensor<?x4x?x64xf32>
    %wk = tfm.weight "encoder.layer.0.attention.self.key_proj.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %bk = tfm.weight "encoder.layer.0.attention.self.key_proj.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %k = tfm.linear %x, %wk, %bk : tensor<?x?x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %k4 = tfm.reshape %k : tensor<?x?x256xf32> -> tensor<?x?x4x64xf32>
    %kh = tfm.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x64xf32> -> tensor<?x4x?x64xf32>
    %wv = tfm.weight "encoder.layer.0.attention.self.value_proj.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %bv = tfm.weight "encoder.layer.0.attention.self.value_proj.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %v = tfm.linear %x, %wv, %bv : tensor<?x?x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %v4 = tfm.reshape %v : tensor<?x?x256xf32> -> tensor<?x?x4x64xf32>
    %vh = tfm.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x64xf32> -> tensor<?x4x?x64xf32>
    %pk = tfm.linear %rel, %wk, %bk : tensor<64x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<64x256xf32>
    %key_pos = tfm.reshape %pk : tensor<64x256xf32> -> tensor<64x4x64xf32>
    %pq = tfm.linear %rel, %wq, %bq : tensor<64x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<64x256xf32>
    %query_pos = tfm.reshape %pq : tensor<64x256xf32> -> tensor<64x4x64xf32>
    %ctx = tfm.attention %qh, %kh, %vh key_padding_mask(%mask : tensor<?x?xi1>)
        modifier_operands(%key_pos, %query_pos : tensor<64x4x64xf32>, tensor<64x4x64xf32>)
        {scale = 0.07216878364870322 : f64, modifiers = [{kind = "deberta", span = 32 : i64, max_position = 128 : i64}]}
        : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x64xf32>
    %ctx_t = tfm.transpose %ctx {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x4x?x64xf32> -> tensor<?x?x4x64xf32>
    %ctx_m = tfm.reshape %ctx_t : tensor<?x?x4x64xf32> -> tensor<?x?x256xf32>
    %wo = tfm.weight "encoder.layer.0.attention.output.dense.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %bo = tfm.weight "encoder.layer.0.attention.output.dense.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %attn = tfm.linear %ctx_m, %wo, %bo : tensor<?x?x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %r1 = tfm.add %attn, %x : tensor<?x?x256xf32>, tensor<?x?x256xf32> -> tensor<?x?x256xf32>
    %n1_g = tfm.weight "encoder.layer.0.attention.output.LayerNorm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %n1_b = tfm.weight "encoder.layer.0.attention.output.LayerNorm.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %x1 = tfm.layer_norm %r1, %n1_g, %n1_b {epsilon = 1.0e-07 : f64} : tensor<?x?x256xf32>, tensor<256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>

    // FFN: intermediate (GELU, erf form) and output.
    %w1 = tfm.weight "encoder.layer.0.intermediate.dense.weight" {std = 0.06 : f64} : tensor<256x1024xf32>
    %b1 = tfm.weight "encoder.layer.0.intermediate.dense.bias" {init = #tfm.init<zeros>} : tensor<1024xf32>
    %fc = tfm.linear %x1, %w1, %b1 : tensor<?x?x256xf32>, tensor<256x1024xf32>, tensor<1024xf32> -> tensor<?x?x1024xf32>
    %act = tfm.gelu %fc : tensor<?x?x1024xf32> -> tensor<?x?x1024xf32>
    %w2 = tfm.weight "encoder.layer.0.output.dense.weight" {std = 0.03 : f64} : tensor<1024x256xf32>
    %b2 = tfm.weight "encoder.layer.0.output.dense.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %ffn = tfm.linear %act, %w2, %b2 : tensor<?x?x1024xf32>, tensor<1024x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %r2 = tfm.add %ffn, %x1 : tensor<?x?x256xf32>, tensor<?x?x256xf32> -> tensor<?x?x256xf32>
    %n2_g = tfm.weight "encoder.layer.0.output.LayerNorm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %n2_b = tfm.weight "encoder.layer.0.output.LayerNorm.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %out = tfm.layer_norm %r2, %n2_g, %n2_b {epsilon = 1.0e-07 : f64} : tensor<?x?x256xf32>, tensor<256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    return %out : tensor<?x?x256xf32>
  }
}
