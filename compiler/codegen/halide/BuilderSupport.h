//===- BuilderSupport.h - helpers shared by the kernel builders -*- C++ -*-===//
//
// Internal to the Halide code generator: how inputs and outputs are declared
// (names, element types, stride and min constraints, estimates) and the
// elementwise CPU schedule most kernels share. Keeping these in one place is
// what makes every kernel honour the buffer conventions of Kernels.h the
// same way.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_CODEGEN_HALIDE_BUILDERSUPPORT_H
#define ATTUNE_COMPILER_CODEGEN_HALIDE_BUILDERSUPPORT_H

#include "compiler/codegen/halide/KernelBuilders.h"

#include "Halide.h"

#include <string>
#include <vector>

namespace attune::codegen::detail {

/// Reports a spec the code generator cannot build. Halide's own errors are
/// Halide::Error too, so callers catch one type for both.
[[noreturn]] void failSpec(const std::string &message);

/// True for the floating-point element types the arithmetic kernels accept.
bool isFloatType(ScalarType type);

/// Fails unless `spec.elementType` is a float type; `kind` names the kernel.
void requireFloatElement(const KernelSpec &spec, const char *kind);

/// Declares input `name`. Every dimension has min 0 (the host never passes
/// anything else). When `denseInner`, dimension 0 must have stride 1, which
/// lets loads along it vectorise; otherwise any stride is accepted, including
/// 0 (broadcast) and the permuted strides of a transpose.
Halide::ImageParam makeInput(ScalarType type, int dimensions,
                             const std::string &name, bool denseInner);

/// Sets estimates on `param` from `sizes` (innermost first), for an
/// autoscheduler baseline. Missing trailing sizes default to 1.
void setInputEstimates(Halide::ImageParam &param,
                       const std::vector<int> &sizes);

/// Constrains the output buffer (min 0, dense innermost dimension) and sets
/// estimates (innermost first).
void constrainOutput(Halide::Func &out, const std::vector<int> &sizes);

/// `natural_vector_size<float>()` of the target: 16 on AVX-512, 8 on AVX2.
int floatVectorWidth(const Halide::Target &target);

/// The elementwise CPU schedule: dimension 0 vectorised (with guarded tails,
/// so any extent works, including those smaller than a vector), the other
/// dimensions fused into one loop run in parallel in tasks of roughly
/// `grainElements` outputs. A rank-1 output is split into blocks instead.
void scheduleElementwiseCPU(Halide::Func &out,
                            const std::vector<Halide::Var> &vars,
                            const Halide::Target &target,
                            int grainElements = 1 << 14);

/// True when `target` generates device code (CUDA): the builders then take
/// their GPU schedule, every stage that reads a buffer runs on the device.
bool isGpuTarget(const Halide::Target &target);

/// Threads per block of the GPU schedules: along dimension 0, so that a
/// warp reads 32 consecutive elements.
inline constexpr int kGpuThreads = 128;

/// Content terms of score modifiers (a table row per relative distance)
/// whose rows stop changing within this distance, as Shaw's clip does, are
/// looked up per score from a small table; the others are computed by
/// distance (the fused kernel's defineAttention, the unfused score_bias).
inline constexpr int64_t kContentLookupDistance = 64;

/// The elementwise GPU schedule of `f`'s pure definition over `vars`
/// (innermost first): dimension 0 split into kGpuThreads threads (guarded
/// tails), its outer part and every other dimension fused into one block
/// index, so no extent runs into CUDA's 65535 limit on the second and
/// third grid dimensions.
void scheduleElementwiseGPU(Halide::Func &f, const std::vector<Halide::Var> &vars);

/// scheduleElementwiseGPU on a GPU target, else scheduleElementwiseCPU.
void scheduleElementwise(Halide::Func &out, const std::vector<Halide::Var> &vars,
                         const Halide::Target &target, int grainElements = 1 << 14);

/// For builders that have no GPU schedule: fails (failSpec) on a GPU target
/// naming the kernel kind and `why`; does nothing on a CPU target.
void requireCpuTarget(const Halide::Target &target, const char *kind, const char *why);

/// Vector registers the target's code can use: 32 (zmm) with AVX-512, 16
/// (ymm or xmm) otherwise. Register-tiled schedules size their accumulator
/// tiles from it.
int vectorRegisterCount(const Halide::Target &target);

/// The schedule parameters `spec` carries for the ISA level of `target`
/// (empty when it carries none: the builder's formula decides).
const ScheduleParams &scheduleFor(const KernelSpec &spec,
                                  const Halide::Target &target);

/// `params[name]` when present, else `fallback`.
int64_t scheduleParam(const ScheduleParams &params, const std::string &name,
                      int64_t fallback);

/// tanh of the f32 `v`, vectorizable, within about 5e-7 relative of the
/// exact value: the Unary kernel's tanh and attention's softcap.
Halide::Expr tanhExpr(const Halide::Expr &v);

/// The float activation `kind` (Relu, GeluErf, GeluTanh, Silu) of `v`, an
/// f32 value: the Unary kernel's definition, which Linear's epilogue shares.
/// Fails the spec for any other unary kind.
Halide::Expr activationExpr(UnaryKind kind, const Halide::Expr &v);

/// Casts `value` (computed in f32) to the element type of `spec`.
Halide::Expr castToElement(const KernelSpec &spec, const Halide::Expr &value);

} // namespace attune::codegen::detail

#endif // ATTUNE_COMPILER_CODEGEN_HALIDE_BUILDERSUPPORT_H
