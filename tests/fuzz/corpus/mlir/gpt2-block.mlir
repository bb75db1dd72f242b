module {
  func.func @gpt2_block(%ids: tensor<?x?xi32> {tfm.name = "ids", tfm.dim_names = ["batch", "seq"]})
      -> (tensor<?x?x768xf32> {tfm.name = "hidden_states"}) {
    %wte = tfm.weight "wte" : tensor<50257x768xf32>
    %wpe = tfm.weight "wpe" {std = 0.01 : f64} : tensor<1024x768xf32>
    %tok = tfm.embedding %wte, %ids : tensor<50257x768xf32>, tensor<?x?xi32> -> tensor<?x?x768xf32>
    %x = tfm.learned_position %tok, %wpe : tensor<?x?x768xf32>, tensor<1024x768xf32> -> tensor<?x?x768xf32>

    %h_g = tfm.weight "h0.ln_1.weight" {init = #tfm.init<ones>} : tensor<768xf32>
    %h_b = tfm.weight "h0.ln_1.bias" {init = #tfm.init<zeros>} : tensor<768xf32>
    %h = tfm.layer_norm %x, %h_g, %h_b {epsilon = 1.0e-05 : f64} : tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
    %qp_w = tfm.weight "h0.attn.q_proj.weight" : tensor<768x768xf32>
    %qp_b = tfm.weight "h0.attn.q_proj.bias" : tensor<768xf32>
    %q = tfm.linear %h, %qp_w, %qp_b : tensor<?x?x768xf32>, tensor<768x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
    %q4 = tfm.reshape %q : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
    %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
    %kp_w = tfm.weight "h0.attn.k_proj.weight" : tensor<768x768xf32>
    %kp_b = tfm.weight "h0.attn.k_proj.bias" : tensor<768xf32>
    %k = tfm.linear %h, %kp_w, %kp_b : tensor<?x?x768xf32>, tensor<768x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
    %k4 = tfm.reshape %k : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
    %kh = tfm.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
    %vp_w = tfm.weight "h0.attn.v_proj.weight" : tensor<768x768xf32>
    %vp_b = tfm.weight "h0.attn.v_proj.bias" : tensor<768xf32>
    %v = tfm.linear %h, %vp_w, %vp_b : tensor<?x?x768xf32>, tensor<768x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
    %v4 = tfm.reshape %v : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
    %vh = tfm.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
    %scores = tfm.matmul %qh, %kh {transpose_b = true} : tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32> -> tensor<?x12x?x?xf32>
    %scale = arith.constant dense<1.250000e-01> : tensor<f32>
    %scaled = tfm.mul %scores, %scale : tensor<?x12x?x?xf32>, tensor<f32> -> tensor<?x12x?x?xf32>
    %masked = tfm.causal_mask %scaled : tensor<?x12x?x?xf32> -> tensor<?x12x?x?xf32>
    %probs = tfm.softmax %masked {axis = -1 : i64} : tensor<?x12x?x?xf32> -> tensor<?x12x?x?xf32>
    %ctx = tfm.matmul %probs, %vh : tensor<?x12x?x?xf32>, tensor<?x12x?x64xf32> -> tensor<?x12x?x64xf32>
    %ctx_t = tfm.transpose %ctx {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x12x?x64xf32> -> tensor<?x?x12x64xf32>
    %ctx_m = tfm.reshape %ctx_t : tensor<?x?x12x64xf32> -> tensor<?x?x768xf32>
    %op_w = tfm.weight "h0.attn.c_proj.weight" : tensor<768x768xf32>
    %op_b = tfm.weight "h0.attn.c_proj.bias" : tensor<768xf32>
    %attn = tfm.linear %ctx_m, %op_w, %op_b : tensor<?x?x768xf32>, tensor<768x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
    %x1 = tfm.add %x, %attn : tensor<?x?x768xf32>, tensor<?x?x768xf32> -> tensor<?x?x768xf32>

    %h2_g = tfm.weight "h0.ln_2.weight" {init = #tfm.init<ones>} : tensor<768xf32>
    %h2_b = tfm.weight "h0.ln_2.bias" {init = #tfm.init<zeros>} : tensor<768xf32>
    %h2 = tfm.layer_norm %x1, %h2_g, %h2_b {epsilon = 1.0e-05 : f64} : tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
    %fc_w = tfm.weight "h0.mlp.c_fc.weight" : tensor<768x3072xf32>
    %fc_b = tfm.weight "h0.mlp.c_fc.bias" : tensor<3072xf32>
    %fc = tfm.linear %h2, %fc_w, %fc_b : tensor<?x?x768xf32>, tensor<768x3072xf32>, tensor<3072xf32> -> tensor<?x?x3072xf32>
    %act = tfm.gelu %fc {approximate = #tfm.gelu_approx<tanh>} : tensor<?x?x3072xf32> -> tensor<?x?x3072xf32>
    %pr_w = tfm.weight "h0.mlp.c_proj.weight" : tensor<3072x768xf32>
    %pr_b = tfm.weight "h0.mlp.c_proj.bias" : tensor<768xf32>
    %mlp = tfm.linear %act, %pr_w, %pr_b : tensor<?x?x3072xf32>, tensor<3072x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
    %x2 = tfm.add %x1, %mlp : tensor<?x?x768xf32>, tensor<?x?x768xf32> -> tensor<?x?x768xf32>

    %out_g = tfm.weight "ln_f.weight" {init = #tfm.init<ones>} : tensor<768xf32>
    %out_b = tfm.weight "ln_f.bias" {init = #tfm.init<zeros>} : tensor<768xf32>
    %out = tfm.layer_norm %x2, %out_g, %out_b {epsilon = 1.0e-05 : f64} : tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
    return %out : tensor<?x?x768xf32>
  }
}
