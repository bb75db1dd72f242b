module {
  func.func @t5_encoder_block(%ids: tensor<?x?xi32> {tfm.name = "input_ids", tfm.dim_names = ["batch", "seq"]})
      -> (tensor<?x?x256xf32> {tfm.name = "hidden_states"}) {
    %wte = tfm.weight "shared.weight" : tensor<1000x256xf32>
    %x = tfm.embedding %wte, %ids : tensor<1000x256xf32>, tensor<?x?xi32> -> tensor<?x?x256xf32>

    %n1_g = tfm.weight "encoder.block.0.layer.0.layer_norm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %h = tfm.rms_norm %x, %n1_g {epsilon = 1.0e-06 : f64} : tensor<?x?x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %wq = tfm.weight "encoder.block.0.layer.0.SelfAttention.q.weight" {std = 0.01 : f64} : tensor<256x256xf32>
    %q = tfm.linear %h, %wq : tensor<?x?x256xf32>, tensor<256x256xf32> -> tensor<?x?x256xf32>
    %q4 = tfm.reshape %q : tensor<?x?x256xf32> -> tensor<?x?x8x32xf32>
    %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x8x32xf32> -> tensor<?x8x?x32xf32>
    %wk = tfm.weight "encoder.block.0.layer.0.SelfAttention.k.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %k = tfm.linear %h, %wk : tensor<?x?x256xf32>, tensor<256x256xf32> -> tensor<?x?x256xf32>
    %k4 = tfm.reshape %k : tensor<?x?x256xf32> -> tensor<?x?x8x32xf32>
    %kh = tfm.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x8x32xf32> -> tensor<?x8x?x32xf32>
    %wv = tfm.weight "encoder.block.0.layer.0.SelfAttention.v.weight" : tensor<256x256xf32>
    %v = tfm.linear %h, %wv : tensor<?x?x256xf32>, tensor<256x256xf32> -> tensor<?x?x256xf32>
    %v4 = tfm.reshape %v : tensor<?x?x256xf32> -> tensor<?x?x8x32xf32>
    %vh = tfm.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x8x32xf32> -> tensor<?x8x?x32xf32>
    %rel = tfm.weight "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight" {std = 0.5 : f64} : tensor<32x8xf32>
    %ctx = tfm.attention %qh, %kh, %vh modifier_operands(%rel : tensor<32x8xf32>)
        {scale = 1.0 : f64, modifiers = [{kind = "t5", num_buckets = 32 : i64, max_distance = 128 : i64}]}
        : tensor<?x8x?x32xf32>, tensor<?x8x?x32xf32>, tensor<?x8x?x32xf32> -> tensor<?x8x?x32xf32>
    %ctx_t = tfm.transpose %ctx {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x8x?x32xf32> -> tensor<?x?x8x32xf32>
    %ctx_m = tfm.reshape %ctx_t : tensor<?x?x8x32xf32> -> tensor<?x?x256xf32>
    %wo = tfm.weight "encoder.block.0.layer.0.SelfAttention.o.weight" : tensor<256x256xf32>
    %attn = tfm.linear %ctx_m, %wo : tensor<?x?x256xf32>, tensor<256x256xf32> -> tensor<?x?x256xf32>
    %x1 = tfm.add %x, %attn : tensor<?x?x256xf32>, tensor<?x?x256xf32> -> tensor<?x?x256xf32>

    %n2_g = tfm.weight "encoder.block.0.layer.1.layer_norm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %h2 = tfm.rms_norm %x1, %n2_g {epsilon = 1.0e-06 : f64} : tensor<?x?x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %wi = tfm.weight "encoder.block.0.layer.1.DenseReluDense.wi.weight" : tensor<256x1024xf32>
    %fc = tfm.linear %h2, %wi : tensor<?x?x256xf32>, tensor<256x1024xf32> -> tensor<?x?x1024xf32>
    %act = tfm.relu %fc : tensor<?x?x1024xf32> -> tensor<?x?x1024xf32>
    %wo2 = tfm.weight "encoder.block.0.layer.1.DenseReluDense.wo.weight" : tensor<1024x256xf32>
    %ffn = tfm.linear %act, %wo2 : tensor<?x?x1024xf32>, tensor<1024x256xf32> -> tensor<?x?x256xf32>
    %x2 = tfm.add %x1, %ffn : tensor<?x?x256xf32>, tensor<?x?x256xf32> -> tensor<?x?x256xf32>

    %nf_g = tfm.weight "encoder.final_layer_norm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %out = tfm.rms_norm %x2, %nf_g {epsilon = 1.0e-06 : f64} : tensor<?x?x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    return %out : tensor<?x?x256xf32>
  }
}
