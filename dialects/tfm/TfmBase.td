//===- TfmBase.td - tfm dialect definition -----------------*- tablegen -*-===//
//
// The tfm dialect: Transformer models as a graph of value-semantic ops on
// ranked tensors. Dynamic batch and sequence dimensions are written `?`.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_DIALECTS_TFM_TFMBASE_TD
#define ATTUNE_DIALECTS_TFM_TFMBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tfm_Dialect : Dialect {
  let name = "tfm";
  let cppNamespace = "::attune::tfm";
  let summary = "Transformer model graphs";
  let description = [{
    The `tfm` dialect describes Transformer models at the level their authors
    think of them: embeddings, positional encodings, norms, linear layers,
    attention. Ops have value semantics on ranked tensors; dimensions may be
    dynamic (`?`) wherever a real model needs them (batch, sequence).

    A model is a `func.func` whose arguments are the model inputs and whose
    results are its outputs. Parameters are `tfm.weight` ops that name a
    tensor in a weights file.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

class Tfm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tfm_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Tfm_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Tfm_IndexTensor : RankedTensorOf<[I32, I64]>;
/// Element-wise arithmetic: floats, and the integers index computations
/// (position buckets, clipped distances) are written in.
def Tfm_NumericTensor : RankedTensorOf<[F32, F16, BF16, I32, I64]>;
/// Masks and conditions: i1, or integers where nonzero means true.
def Tfm_PredTensor : RankedTensorOf<[I1, I8, I32, I64]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tfm_SinusoidalForm_Interleaved : I32EnumAttrCase<"interleaved", 0>;
def Tfm_SinusoidalForm_Concat : I32EnumAttrCase<"concat", 1>;
def Tfm_SinusoidalFormKind : I32EnumAttr<"SinusoidalFormKind",
    "layout of the sin and cos halves of a sinusoidal encoding",
    [Tfm_SinusoidalForm_Interleaved, Tfm_SinusoidalForm_Concat]> {
  let cppNamespace = "::attune::tfm";
  let genSpecializedAttr = 0;
}
// EnumAttr's default syntax is `#tfm.x value`; spell them `#tfm.x<value>` as
// upstream enums (#arith.fastmath<fast>) and the op examples do.
def Tfm_SinusoidalFormAttr
    : EnumAttr<Tfm_Dialect, Tfm_SinusoidalFormKind, "sinusoidal_form"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tfm_GeluApprox_None : I32EnumAttrCase<"none", 0>;
def Tfm_GeluApprox_Tanh : I32EnumAttrCase<"tanh", 1>;
def Tfm_GeluApproxKind : I32EnumAttr<"GeluApproxKind",
    "approximation used by gelu", [Tfm_GeluApprox_None, Tfm_GeluApprox_Tanh]> {
  let cppNamespace = "::attune::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_GeluApproxAttr : EnumAttr<Tfm_Dialect, Tfm_GeluApproxKind, "gelu_approx"> {
  let assemblyFormat = "`<` $value `>`";
}

// The activation a tfm.linear applies to x W + b (tfm-fuse-epilogues folds
// the element-wise op that follows a linear into it). Each is the element-wise
// op of the same name: relu, gelu (erf), gelu with approximate = tanh, silu.
def Tfm_Activation_None : I32EnumAttrCase<"none", 0>;
def Tfm_Activation_Relu : I32EnumAttrCase<"relu", 1>;
def Tfm_Activation_Gelu : I32EnumAttrCase<"gelu", 2>;
def Tfm_Activation_GeluTanh : I32EnumAttrCase<"gelu_tanh", 3>;
def Tfm_Activation_Silu : I32EnumAttrCase<"silu", 4>;
def Tfm_ActivationKind : I32EnumAttr<"ActivationKind",
    "activation applied by tfm.linear",
    [Tfm_Activation_None, Tfm_Activation_Relu, Tfm_Activation_Gelu,
     Tfm_Activation_GeluTanh, Tfm_Activation_Silu]> {
  let cppNamespace = "::attune::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_ActivationAttr : EnumAttr<Tfm_Dialect, Tfm_ActivationKind, "activation"> {
  let assemblyFormat = "`<` $value `>`";
}

// Where the head axis sits in tfm.attention's query, key, value and result:
// [B, H, S, D] (each head's rows contiguous, the layout of a batched matmul)
// or [B, S, H, D] (the layout a projection writes before heads are split,
// so that split and merge are reshapes, not copies; tfm-propagate-layouts
// chooses it where it removes transposes).
def Tfm_HeadLayout_Bhsd : I32EnumAttrCase<"bhsd", 0>;
def Tfm_HeadLayout_Bshd : I32EnumAttrCase<"bshd", 1>;
def Tfm_HeadLayoutKind : I32EnumAttr<"HeadLayoutKind",
    "order of the head and sequence axes of attention's operands",
    [Tfm_HeadLayout_Bhsd, Tfm_HeadLayout_Bshd]> {
  let cppNamespace = "::attune::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_HeadLayoutAttr : EnumAttr<Tfm_Dialect, Tfm_HeadLayoutKind, "head_layout"> {
  let assemblyFormat = "`<` $value `>`";
}

// A layout, as a tensor type's encoding: the weight a GEMM reads, packed at
// compile time into the panels its micro-kernel streams (tfm-pack-weights).
def Tfm_PanelsAttr : AttrDef<Tfm_Dialect, "Panels"> {
  let mnemonic = "panels";
  let summary = "a [K, N] matrix stored as column panels of `width`";
  let description = [{
    The encoding of a `tensor<K x N x T, #tfm.panels<W>>`: the logical
    `[K, N]` matrix is stored as `ceil(N / W)` panels, each `[K, W]` and
    row-major, so that element `(k, n)` sits at
    `((n / W) * K + k) * W + n % W`; the last panel's columns past `N` are
    zeros. A GEMM walking K reads a panel front to back, one `W`-wide row
    per step, instead of `W` values at a stride of `N`. Only the weight of a
    `tfm.linear` has this encoding (the op's verifier and tfm.weight's check
    it); the shape and every op's semantics are the logical matrix's.

    `#tfm.panels<W, bf16>` (`--precision=bf16`) stores the f32 matrix as
    bf16, rounded to nearest even, with pairs of K rows interleaved:
    `[ceil(N / W), ceil(K / 2), W, 2]`, element `(k, n)` at
    `(((n / W) * ceil(K / 2) + k / 2) * W + n % W) * 2 + k % 2`, a zero row
    past an odd K. The linear that reads it rounds its input to bf16 too and
    accumulates in f32 (vdpbf16ps where the CPU has AVX512-BF16); the
    result is the f32 linear's within bf16's rounding.
  }];
  let parameters = (ins "int64_t":$width,
                        OptionalParameter<"::mlir::Type">:$storage);
  let assemblyFormat = "`<` $width (`,` $storage^)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True for bf16 pair panels (`#tfm.panels<W, bf16>`).
    bool isBf16Pairs() const { return getStorage() && getStorage().isBF16(); }
  }];
}

def Tfm_Compare_Lt : I32EnumAttrCase<"lt", 0>;
def Tfm_Compare_Le : I32EnumAttrCase<"le", 1>;
def Tfm_Compare_Gt : I32EnumAttrCase<"gt", 2>;
def Tfm_Compare_Ge : I32EnumAttrCase<"ge", 3>;
def Tfm_Compare_Eq : I32EnumAttrCase<"eq", 4>;
def Tfm_Compare_Ne : I32EnumAttrCase<"ne", 5>;
def Tfm_ComparePredicateKind : I32EnumAttr<"ComparePredicateKind",
    "the relation tfm.compare tests",
    [Tfm_Compare_Lt, Tfm_Compare_Le, Tfm_Compare_Gt, Tfm_Compare_Ge,
     Tfm_Compare_Eq, Tfm_Compare_Ne]> {
  let cppNamespace = "::attune::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_ComparePredicateAttr
    : EnumAttr<Tfm_Dialect, Tfm_ComparePredicateKind, "compare"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tfm_Init_Normal : I32EnumAttrCase<"normal", 0>;
def Tfm_Init_Ones : I32EnumAttrCase<"ones", 1>;
def Tfm_Init_Zeros : I32EnumAttrCase<"zeros", 2>;
def Tfm_InitKind : I32EnumAttr<"InitKind",
    "how a weight is initialised when no weights file supplies it",
    [Tfm_Init_Normal, Tfm_Init_Ones, Tfm_Init_Zeros]> {
  let cppNamespace = "::attune::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_InitAttr : EnumAttr<Tfm_Dialect, Tfm_InitKind, "init"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // ATTUNE_DIALECTS_TFM_TFMBASE_TD
