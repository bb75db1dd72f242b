module {
  func.func @bert_encoder(
      %ids: tensor<?x?xi32> {tfm.name = "input_ids", tfm.dim_names = ["batch", "seq"]},
      %types: tensor<?x?xi32> {tfm.name = "token_type_ids", tfm.dim_names = ["batch", "seq"]},
      %mask: tensor<?x?xi1> {tfm.name = "attention_mask", tfm.dim_names = ["batch", "seq"]})
      -> (tensor<?x?x256xf32> {tfm.name = "hidden_states"}) {
    %wte = tfm.weight "embeddings.word_embeddings.weight" : tensor<1000x256xf32>
    %wpe = tfm.weight "embeddings.position_embeddings.weight" : tensor<512x256xf32>
    %wtt = tfm.weight "embeddings.token_type_embeddings.weight" : tensor<2x256xf32>
    %tok = tfm.embedding %wte, %ids : tensor<1000x256xf32>, tensor<?x?xi32> -> tensor<?x?x256xf32>
    %pos = tfm.learned_position %tok, %wpe : tensor<?x?x256xf32>, tensor<512x256xf32> -> tensor<?x?x256xf32>
    %typ = tfm.embedding %wtt, %types : tensor<2x256xf32>, tensor<?x?xi32> -> tensor<?x?x256xf32>
    %sum = tfm.add %pos, %typ : tensor<?x?x256xf32>, tensor<?x?x256xf32> -> tensor<?x?x256xf32>
    %e_g = tfm.weight "embeddings.LayerNorm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %e_b = tfm.weight "embeddings.LayerNorm.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %x = tfm.layer_norm %sum, %e_g, %e_b {epsilon = 1.0e-12 : f64} : tensor<?x?x256xf32>, tensor<256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>

    %wq = tfm.weight "encoder.layer.0.attention.self.query.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %bq = tfm.weight "encoder.layer.0.attention.self.query.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %q = tfm.linear %x, %wq, %bq : tensor<?x?x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %q4 = tfm.reshape %q : tensor<?x?x256xf32> -> tensor<?x?x4x64xf32>
    %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x64xf32> -> tensor<?x4x?x64xf32>
    %wk = tfm.weight "encoder.layer.0.attention.self.key.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %bk = tfm.weight "encoder.layer.0.attention.self.key.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %k = tfm.linear %x, %wk, %bk : tensor<?x?x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %k4 = tfm.reshape %k : tensor<?x?x256xf32> -> tensor<?x?x4x64xf32>
    %kh = tfm.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x64xf32> -> tensor<?x4x?x64xf32>
    %wv = tfm.weight "encoder.layer.0.attention.self.value.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %bv = tfm.weight "encoder.layer.0.attention.self.value.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %v = tfm.linear %x, %wv, %bv : tensor<?x?x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %v4 = tfm.reshape %v : tensor<?x?x256xf32> -> tensor<?x?x4x64xf32>
    %vh = tfm.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x64xf32> -> tensor<?x4x?x64xf32>
    %scores = tfm.matmul %qh, %kh {transpose_b = true} : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x?xf32>
    %sqrt_d = arith.constant dense<8.0> : tensor<f32>
    %scaled = tfm.div %scores, %sqrt_d : tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
    %keep = tfm.reshape %mask : tensor<?x?xi1> -> tensor<?x1x1x?xi1>
    %ninf = arith.constant dense<0xFF800000> : tensor<f32>
    %masked = tfm.where %keep, %scaled, %ninf : tensor<?x1x1x?xi1>, tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
    %probs = tfm.softmax %masked {axis = -1 : i64} : tensor<?x4x?x?xf32> -> tensor<?x4x?x?xf32>
    %ctx = tfm.matmul %probs, %vh : tensor<?x4x?x?xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x64xf32>
    %ctx_t = tfm.transpose %ctx {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x4x?x64xf32> -> tensor<?x?x4x64xf32>
    %ctx_m = tfm.reshape %ctx_t : tensor<?x?x4x64xf32> -> tensor<?x?x256xf32>
    %wo = tfm.weight "encoder.layer.0.attention.output.dense.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %bo = tfm.weight "encoder.layer.0.attention.output.dense.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %attn = tfm.linear %ctx_m, %wo, %bo : tensor<?x?x256xf32>, tensor<256x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %r1 = tfm.add %attn, %x : tensor<?x?x256xf32>, tensor<?x?x256xf32> -> tensor<?x?x256xf32>
    %n1_g = tfm.weight "encoder.layer.0.attention.output.LayerNorm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %n1_b = tfm.weight "encoder.layer.0.attention.output.LayerNorm.bias" {init = #tfm.init<zeros>} : tensor<256xf32>
    %x1 = tfm.layer_norm %r1, %n1_g, %n1_b {epsilon = 1.0e-12 : f64} : tensor<?x?x256xf32>, tensor<256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>

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
    %out = tfm.layer_norm %r2, %n2_g, %n2_b {epsilon = 1.0e-12 : f64} : tensor<?x?x256xf32>, tensor<256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    return %out : tensor<?x?x256xf32>
  }
}
