// RUN: attune-opt %attune_src_root/examples/llama-decoder/block.mlir --tfm-fuse-attention | FileCheck %s --check-prefix=LLAMA-IR
// RUN: attune-compile %attune_src_root/examples/llama-decoder/block.mlir -o %t.llama.so
// RUN: attune-run %t.llama.so --random-inputs --dim batch=2 --dim seq=37 --check-reference | FileCheck %s --check-prefix=CHECK
// RUN: attune-compile %attune_src_root/examples/alibi-decoder/block.mlir -o %t.alibi.so
// RUN: attune-run %t.alibi.so --random-inputs --dim batch=1 --dim seq=130 --check-reference | FileCheck %s --check-prefix=CHECK
// RUN: attune-compile %attune_src_root/examples/t5-encoder/block.mlir -o %t.t5.so
// RUN: attune-run %t.t5.so --random-inputs --dim batch=2 --dim seq=150 --check-reference | FileCheck %s --check-prefix=CHECK
// RUN: attune-opt %attune_src_root/examples/transformer-base/block.mlir --tfm-fuse-attention | FileCheck %s --check-prefix=BASE-IR --implicit-check-not=tfm.softmax
// RUN: attune-compile %attune_src_root/examples/transformer-base/block.mlir -o %t.base.so
// RUN: attune-run %t.base.so --random-inputs --dim batch=2 --dim src_seq=33 --dim tgt_seq=70 --check-reference | FileCheck %s --check-prefix=LOGITS
// RUN: attune-opt %attune_src_root/examples/bert-encoder/block.mlir --tfm-fuse-attention | FileCheck %s --check-prefix=BERT-IR --implicit-check-not=tfm.softmax
// RUN: attune-compile %attune_src_root/examples/bert-encoder/block.mlir -o %t.bert.so
// RUN: attune-run %t.bert.so --random-inputs --dim batch=3 --dim seq=129 --check-reference | FileCheck %s --check-prefix=CHECK
// RUN: attune-compile %attune_src_root/examples/deberta-encoder/block.mlir -o %t.deberta.so
// RUN: attune-run %t.deberta.so --random-inputs --dim batch=1 --dim seq=200 --check-reference | FileCheck %s --check-prefix=CHECK
// RUN: attune-compile %attune_src_root/examples/shaw-encoder/block.mlir -o %t.shaw.so
// RUN: attune-run %t.shaw.so --random-inputs --dim batch=2 --dim seq=40 --check-reference | FileCheck %s --check-prefix=CHECK

/// The examples of one model per position-encoding family compile and match
/// the reference evaluator, as their README runs them. The LLaMA layer is
/// written as model code writes attention (tfm.rope on q and k, repeat_kv,
/// matmul, mask, softmax): fusion raises it to one op with GQA and `rope`.

// LLAMA-IR: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, rope = {base = 1.000000e+04 : f64, rotary_dims = 32 : i64}, scale = {{.+}}} : tensor<?x8x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x8x?x32xf32>
// LLAMA-IR-NOT: tfm.rope
// LLAMA-IR-NOT: tfm.softmax

/// Transformer-base writes its three attentions decomposed: the encoder's
/// and the cross-attention's -inf fill of padded source keys becomes
/// key_padding_mask (the cross-attention has tgt_seq queries over src_seq
/// keys, run here with more queries than keys), the decoder's causal_mask
/// `causal`. BERT's division by sqrt(64) becomes the scale.
// BASE-IR: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} key_padding_mask(%{{.+}} : tensor<?x?xi1>) {scale = 0.1767766922712326 : f64} : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
// BASE-IR: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, scale = 0.1767766922712326 : f64} : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
// BASE-IR: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} key_padding_mask(%{{.+}} : tensor<?x?xi1>) {scale = 0.1767766922712326 : f64} : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
// BERT-IR: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} key_padding_mask(%{{.+}} : tensor<?x?xi1>) {scale = 1.250000e-01 : f64} : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x64xf32>

/// DeBERTa and Shaw write tfm.attention with their modifier directly; the
/// runs reach past DeBERTa's last log bucket (distance 128) and Shaw's
/// clipping distance (16).

// CHECK: reference 'hidden_states': max abs err {{.*}}: ok)
// LOGITS: reference 'logits': max abs err {{.*}}: ok)
