// The encoder-decoder Transformer of Vaswani et al., "Attention Is All You
// Need" (2017), small: one encoder and one decoder layer, d_model 128, 4
// heads of 32, FFN 512, a vocabulary of 1000 shared by source and target.
// As in the paper: token embeddings shared by the encoder, the decoder and
// the pre-softmax projection (tied), scaled by sqrt(d_model); the
// interleaved sinusoidal position encoding; post-LN (LayerNorm(x +
// sublayer(x))) around every sublayer; ReLU FFN. The encoder self-attention
// and the decoder's cross-attention ignore padded source positions
// (`source_mask`, nonzero = a real token); the decoder self-attention is
// causal. Cross-attention has Sq = tgt_seq queries over Sk = src_seq keys
// and values from the encoder output. Batch, src_seq and tgt_seq are
// dynamic. Dropout is an identity at inference and is left out.
//
// Every attention is written as exporters write it (matmul with kᵀ, scale,
// mask, softmax, matmul with v); attune-compile raises each to one
// tfm.attention, the padding masks to its key_padding_mask.
module {
  func.func @transformer_base(
      %src: tensor<?x?xi32> {tfm.name = "source_ids", tfm.dim_names = ["batch", "src_seq"]},
      %src_mask: tensor<?x?xi1> {tfm.name = "source_mask", tfm.dim_names = ["batch", "src_seq"]},
      %tgt: tensor<?x?xi32> {tfm.name = "target_ids", tfm.dim_names = ["batch", "tgt_seq"]})
      -> (tensor<?x?x1000xf32> {tfm.name = "logits"}) {
    // normal(0, d_model^-0.5), as fairseq initialises a shared embedding:
    // times sqrt(d_model) its rows have unit scale, like the encoding.
    %emb = tfm.weight "shared.weight" {std = 0.08838834764831845 : f64} : tensor<1000x128xf32>
    %sqrt_d = arith.constant dense<11.313708498984761> : tensor<f32>
    %scale = arith.constant dense<0.17677669529663687> : tensor<f32>
    %ninf = arith.constant dense<0xFF800000> : tensor<f32>
    // [B, src_seq] -> [B, 1, 1, src_seq]: one row of keys to keep per batch,
    // shared by the encoder and the cross-attention.
    %keep = tfm.reshape %src_mask : tensor<?x?xi1> -> tensor<?x1x1x?xi1>

    //===--- Encoder ---===//
    %se = tfm.embedding %emb, %src : tensor<1000x128xf32>, tensor<?x?xi32> -> tensor<?x?x128xf32>
    %ses = tfm.mul %se, %sqrt_d : tensor<?x?x128xf32>, tensor<f32> -> tensor<?x?x128xf32>
    %x = tfm.sinusoidal_position %ses : tensor<?x?x128xf32> -> tensor<?x?x128xf32>

    // Self-attention over the source, padded keys masked.
    %e_wq = tfm.weight "encoder.layers.0.self_attn.q_proj.weight" {std = 0.09 : f64} : tensor<128x128xf32>
    %e_bq = tfm.weight "encoder.layers.0.self_attn.q_proj.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %e_q = tfm.linear %x, %e_wq, %e_bq : tensor<?x?x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %e_q4 = tfm.reshape %e_q : tensor<?x?x128xf32> -> tensor<?x?x4x32xf32>
    %e_qh = tfm.transpose %e_q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x32xf32> -> tensor<?x4x?x32xf32>
    %e_wk = tfm.weight "encoder.layers.0.self_attn.k_proj.weight" {std = 0.09 : f64} : tensor<128x128xf32>
    %e_bk = tfm.weight "encoder.layers.0.self_attn.k_proj.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %e_k = tfm.linear %x, %e_wk, %e_bk : tensor<?x?x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %e_k4 = tfm.reshape %e_k : tensor<?x?x128xf32> -> tensor<?x?x4x32xf32>
    %e_kh = tfm.transpose %e_k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x32xf32> -> tensor<?x4x?x32xf32>
    %e_wv = tfm.weight "encoder.layers.0.self_attn.v_proj.weight" {std = 0.09 : f64} : tensor<128x128xf32>
    %e_bv = tfm.weight "encoder.layers.0.self_attn.v_proj.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %e_v = tfm.linear %x, %e_wv, %e_bv : tensor<?x?x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %e_v4 = tfm.reshape %e_v : tensor<?x?x128xf32> -> tensor<?x?x4x32xf32>
    %e_vh = tfm.transpose %e_v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x32xf32> -> tensor<?x4x?x32xf32>
    %e_s = tfm.matmul %e_qh, %e_kh {transpose_b = true} : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x?xf32>
    %e_ss = tfm.mul %e_s, %scale : tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
    %e_sm = tfm.where %keep, %e_ss, %ninf : tensor<?x1x1x?xi1>, tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
    %e_p = tfm.softmax %e_sm {axis = -1 : i64} : tensor<?x4x?x?xf32> -> tensor<?x4x?x?xf32>
    %e_c = tfm.matmul %e_p, %e_vh : tensor<?x4x?x?xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
    %e_ct = tfm.transpose %e_c {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x4x?x32xf32> -> tensor<?x?x4x32xf32>
    %e_cm = tfm.reshape %e_ct : tensor<?x?x4x32xf32> -> tensor<?x?x128xf32>
    %e_wo = tfm.weight "encoder.layers.0.self_attn.out_proj.weight" {std = 0.09 : f64} : tensor<128x128xf32>
    %e_bo = tfm.weight "encoder.layers.0.self_attn.out_proj.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %e_a = tfm.linear %e_cm, %e_wo, %e_bo : tensor<?x?x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %e_r1 = tfm.add %x, %e_a : tensor<?x?x128xf32>, tensor<?x?x128xf32> -> tensor<?x?x128xf32>
    %e_n1g = tfm.weight "encoder.layers.0.self_attn_layer_norm.weight" {init = #tfm.init<ones>} : tensor<128xf32>
    %e_n1b = tfm.weight "encoder.layers.0.self_attn_layer_norm.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %e_x1 = tfm.layer_norm %e_r1, %e_n1g, %e_n1b {epsilon = 1.0e-05 : f64} : tensor<?x?x128xf32>, tensor<128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>

    // Position-wise FFN: max(0, x W1 + b1) W2 + b2.
    %e_w1 = tfm.weight "encoder.layers.0.fc1.weight" {std = 0.09 : f64} : tensor<128x512xf32>
    %e_b1 = tfm.weight "encoder.layers.0.fc1.bias" {init = #tfm.init<zeros>} : tensor<512xf32>
    %e_f1 = tfm.linear %e_x1, %e_w1, %e_b1 : tensor<?x?x128xf32>, tensor<128x512xf32>, tensor<512xf32> -> tensor<?x?x512xf32>
    %e_fr = tfm.relu %e_f1 : tensor<?x?x512xf32> -> tensor<?x?x512xf32>
    %e_w2 = tfm.weight "encoder.layers.0.fc2.weight" {std = 0.044 : f64} : tensor<512x128xf32>
    %e_b2 = tfm.weight "encoder.layers.0.fc2.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %e_f2 = tfm.linear %e_fr, %e_w2, %e_b2 : tensor<?x?x512xf32>, tensor<512x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %e_r2 = tfm.add %e_x1, %e_f2 : tensor<?x?x128xf32>, tensor<?x?x128xf32> -> tensor<?x?x128xf32>
    %e_n2g = tfm.weight "encoder.layers.0.final_layer_norm.weight" {init = #tfm.init<ones>} : tensor<128xf32>
    %e_n2b = tfm.weight "encoder.layers.0.final_layer_norm.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %enc = tfm.layer_norm %e_r2, %e_n2g, %e_n2b {epsilon = 1.0e-05 : f64} : tensor<?x?x128xf32>, tensor<128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>

    //===--- Decoder ---===//
    %te = tfm.embedding %emb, %tgt : tensor<1000x128xf32>, tensor<?x?xi32> -> tensor<?x?x128xf32>
    %tes = tfm.mul %te, %sqrt_d : tensor<?x?x128xf32>, tensor<f32> -> tensor<?x?x128xf32>
    %y = tfm.sinusoidal_position %tes : tensor<?x?x128xf32> -> tensor<?x?x128xf32>

    // Masked (causal) self-attention over the target.
    %d_wq = tfm.weight "decoder.layers.0.self_attn.q_proj.weight" {std = 0.09 : f64} : tensor<128x128xf32>
    %d_bq = tfm.weight "decoder.layers.0.self_attn.q_proj.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %d_q = tfm.linear %y, %d_wq, %d_bq : tensor<?x?x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %d_q4 = tfm.reshape %d_q : tensor<?x?x128xf32> -> tensor<?x?x4x32xf32>
    %d_qh = tfm.transpose %d_q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x32xf32> -> tensor<?x4x?x32xf32>
    %d_wk = tfm.weight "decoder.layers.0.self_attn.k_proj.weight" {std = 0.09 : f64} : tensor<128x128xf32>
    %d_bk = tfm.weight "decoder.layers.0.self_attn.k_proj.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %d_k = tfm.linear %y, %d_wk, %d_bk : tensor<?x?x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %d_k4 = tfm.reshape %d_k : tensor<?x?x128xf32> -> tensor<?x?x4x32xf32>
    %d_kh = tfm.transpose %d_k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x32xf32> -> tensor<?x4x?x32xf32>
    %d_wv = tfm.weight "decoder.layers.0.self_attn.v_proj.weight" {std = 0.09 : f64} : tensor<128x128xf32>
    %d_bv = tfm.weight "decoder.layers.0.self_attn.v_proj.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %d_v = tfm.linear %y, %d_wv, %d_bv : tensor<?x?x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %d_v4 = tfm.reshape %d_v : tensor<?x?x128xf32> -> tensor<?x?x4x32xf32>
    %d_vh = tfm.transpose %d_v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x32xf32> -> tensor<?x4x?x32xf32>
    %d_s = tfm.matmul %d_qh, %d_kh {transpose_b = true} : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x?xf32>
    %d_ss = tfm.mul %d_s, %scale : tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
    %d_sm = tfm.causal_mask %d_ss : tensor<?x4x?x?xf32> -> tensor<?x4x?x?xf32>
    %d_p = tfm.softmax %d_sm {axis = -1 : i64} : tensor<?x4x?x?xf32> -> tensor<?x4x?x?xf32>
    %d_c = tfm.matmul %d_p, %d_vh : tensor<?x4x?x?xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
    %d_ct = tfm.transpose %d_c {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x4x?x32xf32> -> tensor<?x?x4x32xf32>
    %d_cm = tfm.reshape %d_ct : tensor<?x?x4x32xf32> -> tensor<?x?x128xf32>
    %d_wo = tfm.weight "decoder.layers.0.self_attn.out_proj.weight" {std = 0.09 : f64} : tensor<128x128xf32>
    %d_bo = tfm.weight "decoder.layers.0.self_attn.out_proj.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %d_a = tfm.linear %d_cm, %d_wo, %d_bo : tensor<?x?x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %d_r1 = tfm.add %y, %d_a : tensor<?x?x128xf32>, tensor<?x?x128xf32> -> tensor<?x?x128xf32>
    %d_n1g = tfm.weight "decoder.layers.0.self_attn_layer_norm.weight" {init = #tfm.init<ones>} : tensor<128xf32>
    %d_n1b = tfm.weight "decoder.layers.0.self_attn_layer_norm.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %d_y1 = tfm.layer_norm %d_r1, %d_n1g, %d_n1b {epsilon = 1.0e-05 : f64} : tensor<?x?x128xf32>, tensor<128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>

    // Cross-attention: queries from the decoder (tgt_seq), keys and values
    // from the encoder output (src_seq), padded source positions masked.
    %x_wq = tfm.weight "decoder.layers.0.encoder_attn.q_proj.weight" {std = 0.09 : f64} : tensor<128x128xf32>
    %x_bq = tfm.weight "decoder.layers.0.encoder_attn.q_proj.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %x_q = tfm.linear %d_y1, %x_wq, %x_bq : tensor<?x?x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %x_q4 = tfm.reshape %x_q : tensor<?x?x128xf32> -> tensor<?x?x4x32xf32>
    %x_qh = tfm.transpose %x_q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x32xf32> -> tensor<?x4x?x32xf32>
    %x_wk = tfm.weight "decoder.layers.0.encoder_attn.k_proj.weight" {std = 0.09 : f64} : tensor<128x128xf32>
    %x_bk = tfm.weight "decoder.layers.0.encoder_attn.k_proj.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %x_k = tfm.linear %enc, %x_wk, %x_bk : tensor<?x?x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %x_k4 = tfm.reshape %x_k : tensor<?x?x128xf32> -> tensor<?x?x4x32xf32>
    %x_kh = tfm.transpose %x_k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x32xf32> -> tensor<?x4x?x32xf32>
    %x_wv = tfm.weight "decoder.layers.0.encoder_attn.v_proj.weight" {std = 0.09 : f64} : tensor<128x128xf32>
    %x_bv = tfm.weight "decoder.layers.0.encoder_attn.v_proj.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %x_v = tfm.linear %enc, %x_wv, %x_bv : tensor<?x?x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %x_v4 = tfm.reshape %x_v : tensor<?x?x128xf32> -> tensor<?x?x4x32xf32>
    %x_vh = tfm.transpose %x_v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x32xf32> -> tensor<?x4x?x32xf32>
    %x_s = tfm.matmul %x_qh, %x_kh {transpose_b = true} : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x?xf32>
    %x_ss = tfm.mul %x_s, %scale : tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
    %x_sm = tfm.where %keep, %x_ss, %ninf : tensor<?x1x1x?xi1>, tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
    %x_p = tfm.softmax %x_sm {axis = -1 : i64} : tensor<?x4x?x?xf32> -> tensor<?x4x?x?xf32>
    %x_c = tfm.matmul %x_p, %x_vh : tensor<?x4x?x?xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
    %x_ct = tfm.transpose %x_c {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x4x?x32xf32> -> tensor<?x?x4x32xf32>
    %x_cm = tfm.reshape %x_ct : tensor<?x?x4x32xf32> -> tensor<?x?x128xf32>
    %x_wo = tfm.weight "decoder.layers.0.encoder_attn.out_proj.weight" {std = 0.09 : f64} : tensor<128x128xf32>
    %x_bo = tfm.weight "decoder.layers.0.encoder_attn.out_proj.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %x_a = tfm.linear %x_cm, %x_wo, %x_bo : tensor<?x?x128xf32>, tensor<128x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %d_r2 = tfm.add %d_y1, %x_a : tensor<?x?x128xf32>, tensor<?x?x128xf32> -> tensor<?x?x128xf32>
    %d_n2g = tfm.weight "decoder.layers.0.encoder_attn_layer_norm.weight" {init = #tfm.init<ones>} : tensor<128xf32>
    %d_n2b = tfm.weight "decoder.layers.0.encoder_attn_layer_norm.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %d_y2 = tfm.layer_norm %d_r2, %d_n2g, %d_n2b {epsilon = 1.0e-05 : f64} : tensor<?x?x128xf32>, tensor<128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>

    // Position-wise FFN.
    %d_w1 = tfm.weight "decoder.layers.0.fc1.weight" {std = 0.09 : f64} : tensor<128x512xf32>
    %d_b1 = tfm.weight "decoder.layers.0.fc1.bias" {init = #tfm.init<zeros>} : tensor<512xf32>
    %d_f1 = tfm.linear %d_y2, %d_w1, %d_b1 : tensor<?x?x128xf32>, tensor<128x512xf32>, tensor<512xf32> -> tensor<?x?x512xf32>
    %d_fr = tfm.relu %d_f1 : tensor<?x?x512xf32> -> tensor<?x?x512xf32>
    %d_w2 = tfm.weight "decoder.layers.0.fc2.weight" {std = 0.044 : f64} : tensor<512x128xf32>
    %d_b2 = tfm.weight "decoder.layers.0.fc2.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %d_f2 = tfm.linear %d_fr, %d_w2, %d_b2 : tensor<?x?x512xf32>, tensor<512x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
    %d_r3 = tfm.add %d_y2, %d_f2 : tensor<?x?x128xf32>, tensor<?x?x128xf32> -> tensor<?x?x128xf32>
    %d_n3g = tfm.weight "decoder.layers.0.final_layer_norm.weight" {init = #tfm.init<ones>} : tensor<128xf32>
    %d_n3b = tfm.weight "decoder.layers.0.final_layer_norm.bias" {init = #tfm.init<zeros>} : tensor<128xf32>
    %dec = tfm.layer_norm %d_r3, %d_n3g, %d_n3b {epsilon = 1.0e-05 : f64} : tensor<?x?x128xf32>, tensor<128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>

    // The pre-softmax projection is the embedding matrix, transposed (tied).
    %emb_t = tfm.transpose %emb {permutation = array<i64: 1, 0>} : tensor<1000x128xf32> -> tensor<128x1000xf32>
    %logits = tfm.linear %dec, %emb_t : tensor<?x?x128xf32>, tensor<128x1000xf32> -> tensor<?x?x1000xf32>
    return %logits : tensor<?x?x1000xf32>
  }
}
