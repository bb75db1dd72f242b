// RUN: attune-run --help | FileCheck %s --check-prefix=RUNTOOL
// RUN: attune-compile --help | FileCheck %s --check-prefix=COMPILE
// RUN: attune-opt --help | FileCheck %s --check-prefix=OPT --implicit-check-not=--x86- --implicit-check-not=--amdgpu- --implicit-check-not=--instcombine-
// RUN: attune-opt --help-hidden | FileCheck %s --check-prefix=OPT-HIDDEN

/// --help lists what the tool does, not the flags of every LLVM backend
/// linked into it. attune-run and attune-compile list their own category
/// and LLVM's --help and --version, nothing else: the only headings are those
/// two, checked from the top of the output to its end.

// RUNTOOL:      OPTIONS:
// RUNTOOL-EMPTY:
// RUNTOOL-NEXT: Generic Options:
// RUNTOOL-NOT:  {{^[^ ].*:$}}
// RUNTOOL:      attune-run options:
// RUNTOOL:        --dim=<name=N>
// RUNTOOL:        --input=<name=@FILE.npy|name=FILE>
// RUNTOOL:        --output=<DIR> {{.*}}bf16 outputs are written as f32
// RUNTOOL-NOT:  {{^[^ ].*:$}}

// COMPILE:      OPTIONS:
// COMPILE-EMPTY:
// COMPILE-NEXT: Generic Options:
// COMPILE-NOT:  {{^[^ ].*:$}}
// COMPILE:      attune-compile options:
// COMPILE:        --emit=<mlir|host-mlir|llvm|obj|lib>
// COMPILE-NOT:  {{^[^ ].*:$}}

/// attune-opt is mlir-opt: its --help lists MLIR's flags and the passes,
/// but not the internals of LLVM's code generators (libLLVM registers those
/// as it loads); --help-hidden still lists them, and they still parse.

// OPT: --mlir-print-ir-after-all
// OPT: --pass-pipeline=
// OPT: --split-input-file
// OPT: Compiler passes to run
// OPT: --tfm-fuse-attention
// OPT: --verify-diagnostics

// OPT-HIDDEN: --x86-
