// RUN: attune-opt %attune_src_root/examples/llama-decoder/block.mlir --tfm-fuse-attention | FileCheck %s --check-prefix=LLAMA-IR
// RUN: attune-compile %attune_src_root/examples/llama-decoder/block.mlir -o %t.llama.so
// RUN: attune-run %t.llama.so --random-inputs --dim batch=2 --dim seq=37 --check-reference | FileCheck %s --check-prefix=CHECK
// RUN: attune-compile %attune_src_root/examples/alibi-decoder/block.mlir -o %t.alibi.so
// RUN: attune-run %t.alibi.so --random-inputs --dim batch=1 --dim seq=130 --check-reference | FileCheck %s --check-prefix=CHECK
// RUN: attune-compile %attune_src_root/examples/t5-encoder/block.mlir -o %t.t5.so
// RUN: attune-run %t.t5.so --random-inputs --dim batch=2 --dim seq=150 --check-reference | FileCheck %s --check-prefix=CHECK

/// The examples of one model per position-encoding family compile and match
/// the reference evaluator, as their README runs them. The LLaMA layer is
/// written as model code writes attention (tfm.rope on q and k, repeat_kv,
/// matmul, mask, softmax): fusion raises it to one op with GQA and `rope`.

// LLAMA-IR: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, rope = {base = 1.000000e+04 : f64, rotary_dims = 32 : i64}, scale = {{.+}}} : tensor<?x8x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x8x?x32xf32>
// LLAMA-IR-NOT: tfm.rope
// LLAMA-IR-NOT: tfm.softmax

// CHECK: reference 'hidden_states': max abs err {{.*}}: ok)
