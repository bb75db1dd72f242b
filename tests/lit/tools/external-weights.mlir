// RUN: rm -rf %t && mkdir -p %t/embedded %t/moved %t/other %t/again
// RUN: attune-compile --help | FileCheck %s --check-prefix=HELP
// RUN: attune-compile %s -o %t/libtiny.so --weights-storage=external
// RUN: attune-compile %s -o %t/embedded/libtiny.so
// RUN: FileCheck %s --check-prefix=HEADER < %t/libtiny.h
// RUN: python3 -c "import os, sys; so, emb, st = (os.path.getsize(f) for f in sys.argv[1:]); \
// RUN:   print('weights', st, 'bytes; library', 'smaller' if so < st else 'larger', 'than its weights;', \
// RUN:   'embedded library larger by', 'at least 99%% of them' if emb - so >= 0.99 * st else 'less')" \
// RUN:   %t/libtiny.so %t/embedded/libtiny.so %t/libtiny.safetensors | FileCheck %s --check-prefix=SIZES
// RUN: python3 -c "import json, struct, sys; b = open(sys.argv[1], 'rb').read(); n = struct.unpack('<Q', b[:8])[0]; \
// RUN:   h = json.loads(b[8:8 + n]); t = {k: v for k, v in h.items() if k != '__metadata__'}; print(sorted(t)); \
// RUN:   print('aligned' if all((8 + n + v['data_offsets'][0]) %% 64 == 0 for v in t.values()) else 'misaligned', \
// RUN:   'ends at', 8 + n + max(v['data_offsets'][1] for v in t.values()), 'of', len(b))" %t/libtiny.safetensors \
// RUN:   | FileCheck %s --check-prefix=BLOB
// RUN: attune-run %t/libtiny.so --random-inputs --dim seq=7 --check-reference | FileCheck %s --check-prefix=CHECKED

/// The file may live elsewhere: ATTUNE_WEIGHTS_PATH names it or its
/// directory. Without it, the library looks only beside itself.
// RUN: cp %t/libtiny.so %t/moved/libtiny.so
// RUN: not attune-run %t/moved/libtiny.so --random-inputs --dim seq=7 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: env ATTUNE_WEIGHTS_PATH=%t attune-run %t/moved/libtiny.so --random-inputs --dim seq=7 --check-reference | FileCheck %s --check-prefix=CHECKED
// RUN: env ATTUNE_WEIGHTS_PATH=%t/libtiny.safetensors attune-run %t/moved/libtiny.so --random-inputs --dim seq=7 --check-reference | FileCheck %s --check-prefix=CHECKED

/// A weights file from another compile of the same model (another seed) has
/// the same size and other bytes: the hash tells. A truncated file, a
/// directory in the file's place and a missing file each say what is wrong,
/// naming the file.
// RUN: attune-compile %s --seed=1 -o %t/other/libtiny.so --weights-storage=external
// RUN: cp %t/other/libtiny.safetensors %t/moved/libtiny.safetensors
// RUN: not attune-run %t/moved/libtiny.so --random-inputs --dim seq=7 2>&1 | FileCheck %s --check-prefix=HASH
// RUN: python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); open(sys.argv[2], 'wb').write(d[:len(d) // 2])" \
// RUN:   %t/libtiny.safetensors %t/moved/libtiny.safetensors
// RUN: not attune-run %t/moved/libtiny.so --random-inputs --dim seq=7 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: rm %t/moved/libtiny.safetensors && mkdir %t/moved/libtiny.safetensors
// RUN: not attune-run %t/moved/libtiny.so --random-inputs --dim seq=7 2>&1 | FileCheck %s --check-prefix=NOT-FILE
// RUN: rm -r %t/moved/libtiny.safetensors
// RUN: not attune-run %t/moved/libtiny.so --random-inputs --dim seq=7 2>&1 | FileCheck %s --check-prefix=MISSING

/// The file holds exactly the blob an embedded library carries, so it is
/// itself a weights file the compiler reads: compiling from it gives the same
/// bytes (the packed `w@panels<16>` binds back to `w`). Writing the output
/// over that input would destroy it, so it is refused.
// RUN: attune-compile %s --weights=%t/libtiny.safetensors -o %t/again/libtiny.so --weights-storage=external
// RUN: python3 -c "import sys; print('same bytes' if open(sys.argv[1], 'rb').read() == open(sys.argv[2], 'rb').read() else 'differ')" \
// RUN:   %t/libtiny.safetensors %t/again/libtiny.safetensors | FileCheck %s --check-prefix=SAME
// RUN: not attune-compile %s --weights=%t/libtiny.safetensors -o %t/libtiny.so --weights-storage=external 2>&1 | FileCheck %s --check-prefix=CLOBBER

// RUN: not attune-compile %s -o %t/bad.so --weights-storage=outside 2>&1 | FileCheck %s --check-prefix=BAD-FLAG

// HELP: --weights-storage=<embedded|external>

// HEADER: * Weights: 3 tensors, {{[0-9]+}} bytes, in libtiny.safetensors beside the
// HEADER: *   attune_model_open_static_with_weights(tiny_attune_model_abi(),
// HEADER-NEXT: *       "path/to/libtiny.safetensors", &model);

/// The 1 MB embedding table dominates: the library with external weights is
/// a fraction of its weights' size, the embedded one carries them all.
// SIZES: weights {{[0-9]+}} bytes; library smaller than its weights; embedded library larger by at least 99% of them

/// Safetensors with every tensor 64-byte aligned in the file, as the kernels
/// expect of the mapped base, and nothing after the last tensor. The linear's
/// weight is stored in the GEMM's panels (tfm-pack-weights), under its own
/// key.
// BLOB: ['w@panels<16>', 'wpe', 'wte']
// BLOB-NEXT: aligned ends at [[END:[0-9]+]] of [[END]]

// CHECKED-NOT: error
// CHECKED: reference 'y': {{.*}}: ok)

// MISSING: attune-run: error: cannot open the weights of '{{.*}}moved/libtiny.so': '{{.*}}moved/libtiny.safetensors' does not exist (looked for beside the library; ATTUNE_WEIGHTS_PATH or attune_model_open_with_weights can name another place)
// HASH: attune-run: error: weights file '{{.*}}moved/libtiny.safetensors' does not match '{{.*}}libtiny.so': its XXH64 is {{[0-9a-f]+}}, the library expects {{[0-9a-f]+}} (a file from another compile, or a damaged one)
// TRUNCATED: attune-run: error: weights file '{{.*}}moved/libtiny.safetensors' of '{{.*}}libtiny.so' has {{[0-9]+}} bytes, expected {{[0-9]+}}: it is not the file the library was compiled with
// NOT-FILE: attune-run: error: cannot open the weights of '{{.*}}moved/libtiny.so': '{{.*}}moved/libtiny.safetensors' is not a regular file

// SAME: same bytes
// CLOBBER: attune-compile: error: --weights-storage=external would write the weights to '{{.*}}libtiny.safetensors', which is a file the weights are read from ('{{.*}}libtiny.safetensors'); choose another -o

// BAD-FLAG: attune-compile: error: unknown --weights-storage value 'outside', expected embedded or external

func.func @tiny(%ids: tensor<1x?xi32> {tfm.name = "ids", tfm.dim_names = ["batch", "seq"]})
    -> (tensor<1x?x64xf32> {tfm.name = "y"}) {
  %table = tfm.weight "wte" : tensor<4096x64xf32>
  %pos = tfm.weight "wpe" : tensor<8x64xf32>
  %w = tfm.weight "w" {std = 0.5 : f64} : tensor<64x64xf32>
  %x = tfm.embedding %table, %ids : tensor<4096x64xf32>, tensor<1x?xi32> -> tensor<1x?x64xf32>
  %p = tfm.learned_position %x, %pos : tensor<1x?x64xf32>, tensor<8x64xf32> -> tensor<1x?x64xf32>
  %y = tfm.linear %p, %w : tensor<1x?x64xf32>, tensor<64x64xf32> -> tensor<1x?x64xf32>
  return %y : tensor<1x?x64xf32>
}
