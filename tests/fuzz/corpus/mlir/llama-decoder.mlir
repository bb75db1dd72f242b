module {
  func.func @llama_block(%ids: tensor<?x?xi32> {tfm.name = "ids", tfm.dim_names = ["batch", "seq"]})
      -> (tensor<?x?x256xf32> {tfm.name = "hidden_states"}) {
    %wte = tfm.weight "embed_tokens.weight" : tensor<1000x256xf32>
    %x = tfm.embedding %wte, %ids : tensor<1000x256xf32>, tensor<?x?xi32> -> tensor<?x?x256xf32>

    %n1_g = tfm.weight "layers.0.input_layernorm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %h = tfm.rms_norm %x, %n1_g {epsilon = 1.0e-06 : f64} : tensor<?x?x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %wq = tfm.weight "layers.0.self_attn.q_proj.weight" {std = 0.06 : f64} : tensor<256x256xf32>
    %q = tfm.linear %h, %wq : tensor<?x?x256xf32>, tensor<256x256xf32> -> tensor<?x?x256xf32>
    %q4 = tfm.reshape %q : tensor<?x?x256xf32> -> tensor<?x?x8x32xf32>
    %qh = tfm.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x8x32xf32> -> tensor<?x8x?x32xf32>
    %wk = tfm.weight "layers.0.self_attn.k_proj.weight" {std = 0.06 : f64} : tensor<256x64xf32>
    %k = tfm.linear %h, %wk : tensor<?x?x256xf32>, tensor<256x64xf32> -> tensor<?x?x64xf32>
    %k4 = tfm.reshape %k : tensor<?x?x64xf32> -> tensor<?x?x2x32xf32>
    %kh = tfm.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x2x32xf32> -> tensor<?x2x?x32xf32>
    %wv = tfm.weight "layers.0.self_attn.v_proj.weight" : tensor<256x64xf32>
    %v = tfm.linear %h, %wv : tensor<?x?x256xf32>, tensor<256x64xf32> -> tensor<?x?x64xf32>
    %v4 = tfm.reshape %v : tensor<?x?x64xf32> -> tensor<?x?x2x32xf32>
    %vh = tfm.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x2x32xf32> -> tensor<?x2x?x32xf32>
    %qr = tfm.rope %qh align(%kh : tensor<?x2x?x32xf32>) {base = 10000.0 : f64} : tensor<?x8x?x32xf32> -> tensor<?x8x?x32xf32>
    %kr = tfm.rope %kh {base = 10000.0 : f64} : tensor<?x2x?x32xf32> -> tensor<?x2x?x32xf32>
    %kx = tfm.repeat_interleave %kr {axis = 1 : i64, repeats = 4 : i64} : tensor<?x2x?x32xf32> -> tensor<?x8x?x32xf32>
    %vx = tfm.repeat_interleave %vh {axis = 1 : i64, repeats = 4 : i64} : tensor<?x2x?x32xf32> -> tensor<?x8x?x32xf32>
    %scores = tfm.matmul %qr, %kx {transpose_b = true} : tensor<?x8x?x32xf32>, tensor<?x8x?x32xf32> -> tensor<?x8x?x?xf32>
    %scale = arith.constant dense<0.17677669529663687> : tensor<f32>
    %scaled = tfm.mul %scores, %scale : tensor<?x8x?x?xf32>, tensor<f32> -> tensor<?x8x?x?xf32>
    %masked = tfm.causal_mask %scaled : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf32>
    %probs = tfm.softmax %masked {axis = -1 : i64} : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf32>
    %ctx = tfm.matmul %probs, %vx : tensor<?x8x?x?xf32>, tensor<?x8x?x32xf32> -> tensor<?x8x?x32xf32>
    %ctx_t = tfm.transpose %ctx {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x8x?x32xf32> -> tensor<?x?x8x32xf32>
    %ctx_m = tfm.reshape %ctx_t : tensor<?x?x8x32xf32> -> tensor<?x?x256xf32>
    %wo = tfm.weight "layers.0.self_attn.o_proj.weight" : tensor<256x256xf32>
    %attn = tfm.linear %ctx_m, %wo : tensor<?x?x256xf32>, tensor<256x256xf32> -> tensor<?x?x256xf32>
    %x1 = tfm.add %x, %attn : tensor<?x?x256xf32>, tensor<?x?x256xf32> -> tensor<?x?x256xf32>

    %n2_g = tfm.weight "layers.0.post_attention_layernorm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %h2 = tfm.rms_norm %x1, %n2_g {epsilon = 1.0e-06 : f64} : tensor<?x?x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    %wg = tfm.weight "layers.0.mlp.gate_proj.weight" : tensor<256x688xf32>
    %gate = tfm.linear %h2, %wg : tensor<?x?x256xf32>, tensor<256x688xf32> -> tensor<?x?x688xf32>
    %wu = tfm.weight "layers.0.mlp.up_proj.weight" : tensor<256x688xf32>
    %up = tfm.linear %h2, %wu : tensor<?x?x256xf32>, tensor<256x688xf32> -> tensor<?x?x688xf32>
    %act = tfm.silu %gate : tensor<?x?x688xf32> -> tensor<?x?x688xf32>
    %prod = tfm.mul %act, %up : tensor<?x?x688xf32>, tensor<?x?x688xf32> -> tensor<?x?x688xf32>
    %wd = tfm.weight "layers.0.mlp.down_proj.weight" : tensor<688x256xf32>
    %mlp = tfm.linear %prod, %wd : tensor<?x?x688xf32>, tensor<688x256xf32> -> tensor<?x?x256xf32>
    %x2 = tfm.add %x1, %mlp : tensor<?x?x256xf32>, tensor<?x?x256xf32> -> tensor<?x?x256xf32>

    %nf_g = tfm.weight "norm.weight" {init = #tfm.init<ones>} : tensor<256xf32>
    %out = tfm.rms_norm %x2, %nf_g {epsilon = 1.0e-06 : f64} : tensor<?x?x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
    return %out : tensor<?x?x256xf32>
  }
}
