module {
  func.func @alibi_block(%ids: tensor<?x?xi32> {tfm.name = "ids", tfm.dim_names = ["batch", "seq"]})
      -> (tensor<?x?x384xf32> {tfm.name = "hidden_states"}) {
    %wte = tfm.weight "word_embeddings.weight" : tensor<1000x384xf32>
    %x = tfm.embedding %wte, %ids : tensor<1000x384xf32>, tensor<?x?xi32> -> tensor<?x?x384xf32>

    %n1_g = tfm.weight "h.0.input_layernorm.weight" {init = #tfm.init<ones>} : tensor<384xf32>
    %n1_b = tfm.weight "h.0.input_layernorm.bias" {init = #tfm.init<zeros>} : tensor<384xf32>
    %h = tfm.layer_norm %x, %n1_g, %n1_b {epsilon = 1.0e-05 : f64} : tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32> -> tensor<?x?x384xf32>
    %wq = tfm.weight "h.0.self_attention.query.weight" {std = 0.05 : f64} : tensor<384x384xf32>
    %q = tfm.linear %h, %wq : tensor<?x?x384xf32>, tensor<384x384xf32> -> tensor<?x?x384xf32>
    %q4 = tfm.reshape %q : tensor<?x?x384xf32> -> tensor<?x?x12x32xf32>
    %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x32xf32> -> tensor<?x12x?x32xf32>
    %wk = tfm.weight "h.0.self_attention.key.weight" {std = 0.05 : f64} : tensor<384x384xf32>
    %k = tfm.linear %h, %wk : tensor<?x?x384xf32>, tensor<384x384xf32> -> tensor<?x?x384xf32>
    %k4 = tfm.reshape %k : tensor<?x?x384xf32> -> tensor<?x?x12x32xf32>
    %kh = tfm.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x32xf32> -> tensor<?x12x?x32xf32>
    %wv = tfm.weight "h.0.self_attention.value.weight" : tensor<384x384xf32>
    %v = tfm.linear %h, %wv : tensor<?x?x384xf32>, tensor<384x384xf32> -> tensor<?x?x384xf32>
    %v4 = tfm.reshape %v : tensor<?x?x384xf32> -> tensor<?x?x12x32xf32>
    %vh = tfm.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x32xf32> -> tensor<?x12x?x32xf32>
    %ctx = tfm.attention %qh, %kh, %vh {scale = 0.17677669529663687 : f64, causal = true, modifiers = [{kind = "alibi"}]}
        : tensor<?x12x?x32xf32>, tensor<?x12x?x32xf32>, tensor<?x12x?x32xf32> -> tensor<?x12x?x32xf32>
    %ctx_t = tfm.transpose %ctx {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x12x?x32xf32> -> tensor<?x?x12x32xf32>
    %ctx_m = tfm.reshape %ctx_t : tensor<?x?x12x32xf32> -> tensor<?x?x384xf32>
    %wo = tfm.weight "h.0.self_attention.dense.weight" : tensor<384x384xf32>
    %attn = tfm.linear %ctx_m, %wo : tensor<?x?x384xf32>, tensor<384x384xf32> -> tensor<?x?x384xf32>
    %x1 = tfm.add %x, %attn : tensor<?x?x384xf32>, tensor<?x?x384xf32> -> tensor<?x?x384xf32>

    %n2_g = tfm.weight "h.0.post_attention_layernorm.weight" {init = #tfm.init<ones>} : tensor<384xf32>
    %n2_b = tfm.weight "h.0.post_attention_layernorm.bias" {init = #tfm.init<zeros>} : tensor<384xf32>
    %h2 = tfm.layer_norm %x1, %n2_g, %n2_b {epsilon = 1.0e-05 : f64} : tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32> -> tensor<?x?x384xf32>
    %w1 = tfm.weight "h.0.mlp.dense_h_to_4h.weight" : tensor<384x1536xf32>
    %b1 = tfm.weight "h.0.mlp.dense_h_to_4h.bias" {init = #tfm.init<zeros>} : tensor<1536xf32>
    %fc = tfm.linear %h2, %w1, %b1 : tensor<?x?x384xf32>, tensor<384x1536xf32>, tensor<1536xf32> -> tensor<?x?x1536xf32>
    %act = tfm.gelu %fc {approximate = #tfm.gelu_approx<tanh>} : tensor<?x?x1536xf32> -> tensor<?x?x1536xf32>
    %w2 = tfm.weight "h.0.mlp.dense_4h_to_h.weight" : tensor<1536x384xf32>
    %b2 = tfm.weight "h.0.mlp.dense_4h_to_h.bias" {init = #tfm.init<zeros>} : tensor<384xf32>
    %mlp = tfm.linear %act, %w2, %b2 : tensor<?x?x1536xf32>, tensor<1536x384xf32>, tensor<384xf32> -> tensor<?x?x384xf32>
    %x2 = tfm.add %x1, %mlp : tensor<?x?x384xf32>, tensor<?x?x384xf32> -> tensor<?x?x384xf32>

    %nf_g = tfm.weight "ln_f.weight" {init = #tfm.init<ones>} : tensor<384xf32>
    %nf_b = tfm.weight "ln_f.bias" {init = #tfm.init<zeros>} : tensor<384xf32>
    %out = tfm.layer_norm %x2, %nf_g, %nf_b {epsilon = 1.0e-05 : f64} : tensor<?x?x384xf32>, tensor<384xf32>, tensor<384xf32> -> tensor<?x?x384xf32>
    return %out : tensor<?x?x384xf32>
  }
}
