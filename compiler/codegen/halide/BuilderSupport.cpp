//===- BuilderSupport.cpp - helpers shared by the kernel builders ---------===//

#include "compiler/codegen/halide/BuilderSupport.h"
#include "compiler/targets/cpu/CpuTarget.h"

#include <algorithm>

using namespace Halide;

namespace attune::codegen::detail {

void failSpec(const std::string &message) {
  throw Halide::CompileError(message);
}

const char *scalarTypeName(ScalarType type) {
  switch (type) {
  case ScalarType::F32:
    return "f32";
  case ScalarType::F16:
    return "f16";
  case ScalarType::BF16:
    return "bf16";
  case ScalarType::I32:
    return "i32";
  case ScalarType::I64:
    return "i64";
  case ScalarType::I8:
    return "i8";
  case ScalarType::Bool:
    return "bool";
  }
  return "unknown";
}

bool isFloatType(ScalarType type) {
  return type == ScalarType::F32 || type == ScalarType::F16 ||
         type == ScalarType::BF16;
}

void requireFloatElement(const KernelSpec &spec, const char *kind) {
  if (!isFloatType(spec.elementType))
    failSpec(std::string(kind) + ": expected a float element type, got " +
             scalarTypeName(spec.elementType));
}

Type toHalideType(ScalarType type) {
  switch (type) {
  case ScalarType::F32:
    return Float(32);
  case ScalarType::F16:
    return Float(16);
  case ScalarType::BF16:
    return BFloat(16);
  case ScalarType::I32:
    return Int(32);
  case ScalarType::I64:
    return Int(64);
  case ScalarType::I8:
    return Int(8);
  case ScalarType::Bool:
    return Bool();
  }
  failSpec("unknown scalar type " + std::to_string(static_cast<int>(type)));
}

ImageParam makeInput(ScalarType type, int dimensions, const std::string &name,
                     bool denseInner) {
  ImageParam param(toHalideType(type), dimensions, name);
  for (int i = 0; i < dimensions; ++i)
    param.dim(i).set_min(0);
  // Halide assumes a unit innermost stride unless told otherwise; strided
  // inputs (broadcasts, transposes) must lift that assumption.
  if (!denseInner && dimensions > 0)
    param.dim(0).set_stride(Expr());
  return param;
}

void setInputEstimates(ImageParam &param, const std::vector<int> &sizes) {
  Region region;
  for (int i = 0; i < param.dimensions(); ++i)
    region.emplace_back(0, i < static_cast<int>(sizes.size()) ? sizes[i] : 1);
  param.set_estimates(region);
}

void constrainOutput(Func &out, const std::vector<int> &sizes) {
  OutputImageParam buffer = out.output_buffer();
  Region region;
  for (int i = 0; i < out.dimensions(); ++i) {
    buffer.dim(i).set_min(0);
    region.emplace_back(0, i < static_cast<int>(sizes.size()) ? sizes[i] : 1);
  }
  out.set_estimates(region);
}

int floatVectorWidth(const Target &target) {
  return std::max(1, target.natural_vector_size<float>());
}

void scheduleElementwiseCPU(Func &out, const std::vector<Var> &vars,
                            const Target &target, int grainElements) {
  const int vec = floatVectorWidth(target);
  Var x = vars[0];
  Var xv(x.name() + "_v"), xl(x.name() + "_l");
  // Guarded tails: the host may pass extents smaller than a vector (a
  // broadcast dimension of 1, a sequence of 1), and an output can never be
  // over-computed outside its buffer.
  out.split(x, xv, xl, vec, TailStrategy::GuardWithIf).vectorize(xl);
  if (vars.size() == 1) {
    Var xo(x.name() + "_task");
    int vectorsPerTask = std::max(1, grainElements / vec);
    out.split(xv, xo, xv, vectorsPerTask, TailStrategy::GuardWithIf)
        .parallel(xo);
    return;
  }
  Var rows = vars[1];
  for (size_t k = 2; k < vars.size(); ++k) {
    Var fused(rows.name() + "_" + vars[k].name());
    out.fuse(rows, vars[k], fused);
    rows = fused;
  }
  Expr rowLength = max(out.output_buffer().dim(0).extent(), 1);
  Expr rowsPerTask = max(1, grainElements / rowLength);
  out.parallel(rows, rowsPerTask, TailStrategy::GuardWithIf);
}

int vectorRegisterCount(const Target &target) {
  return target.has_feature(Target::AVX512) ? 32 : 16;
}

const ScheduleParams &scheduleFor(const KernelSpec &spec, const Target &target) {
  static const ScheduleParams none;
  auto it = spec.schedules.find(attune_isa_name(targets::cpu::isaOf(target)));
  return it == spec.schedules.end() ? none : it->second;
}

int64_t scheduleParam(const ScheduleParams &params, const std::string &name,
                      int64_t fallback) {
  auto it = params.find(name);
  return it == params.end() ? fallback : it->second;
}

Expr castToElement(const KernelSpec &spec, const Expr &value) {
  return cast(toHalideType(spec.elementType), value);
}

} // namespace attune::codegen::detail
