// The ONNX importer on small graphs (tests/lit/frontends/Inputs/onnx, made
// with onnx.helper): what it accepts, and an error naming the node or the
// field for what it does not.

/// Nodes need not be sorted; dim_param names become tfm.dim_names.
// RUN: attune-compile %S/Inputs/onnx/unsorted.onnx --emit=input | FileCheck %s --check-prefix=UNSORTED
// UNSORTED: func.func @g(%{{.+}}: tensor<?x4xf32> {tfm.dim_names = ["batch", ""], tfm.name = "x"}) -> (tensor<?x4xf32> {tfm.name = "y"})
// UNSORTED: tfm.relu
// UNSORTED: tfm.neg

/// An initializer held as external data beside the model; MatMul by a 2-D
/// initializer is tfm.linear over a tfm.weight named after it.
// RUN: attune-compile %S/Inputs/onnx/external.onnx --emit=input | FileCheck %s --check-prefix=EXTERNAL
// EXTERNAL: tfm.weight "w" : tensor<4x5xf32>
// EXTERNAL: tfm.linear

// RUN: not attune-compile %S/Inputs/onnx/external-out-of-bounds.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=OOB
// OOB: error: cannot import '{{.*}}external-out-of-bounds.onnx': initializer 'w': external data [16, 16 + 80) lies beyond the end of '{{.*}}weights.bin' (80 bytes)

// RUN: not attune-compile %S/Inputs/onnx/unsupported-op.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OP
// UNKNOWN-OP: error: cannot import '{{.*}}': node 'hs0' (HardSwish) (opset 17): unsupported op 'HardSwish'

// RUN: not attune-compile %S/Inputs/onnx/cycle.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=CYCLE
// CYCLE: error: cannot import '{{.*}}': node 'add0' (Add) depends on its own output 'a': the graph has a cycle

// RUN: not attune-compile %S/Inputs/onnx/missing-initializer.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: cannot import '{{.*}}': node 'add_bias' (Add) (opset 17): input 1 'bias' is neither a graph input, an initializer nor the output of a node

// RUN: not attune-compile %S/Inputs/onnx/bad-dims.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=DIMS
// DIMS: error: cannot import '{{.*}}': node 'proj' (MatMul) (opset 17): 'tfm.linear' op expected 'weight' dim 0 (in features) to be 4 as the last dim of 'input', got 3

/// A truncated file (the first kilobyte of a real model).
// RUN: rm -rf %t && mkdir -p %t && head -c 1000 %attune_src_root/tests/models/gpt2-tiny/model.onnx > %t/truncated.onnx
// RUN: not attune-compile %t/truncated.onnx --emit=input 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: cannot import '{{.*}}truncated.onnx': '{{.*}}truncated.onnx' is not a valid ONNX model (the protobuf does not parse: truncated or corrupt)
