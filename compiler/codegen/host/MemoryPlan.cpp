//===- MemoryPlan.cpp - static workspace plan for intermediate tensors ----===//
//
// Step 3 of host code generation. Every tensor a kernel writes that is not a
// function result gets a buffer in the workspace. Buffers live from the call
// that writes them to the last call that reads them (a reshape reads through
// to its source, as views name storage roots). Walking the calls in order, a
// buffer takes a slot whose previous buffers are all dead; which slot is
// decided here, statically, while slot sizes (the largest buffer in the
// slot) and offsets (64-aligned prefix sums) depend on the shape symbols
// and are computed by the host code at run time.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/host/HostPlan.h"
#include "compiler/frontends/ScalarTypes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace attune::codegen::host {

std::vector<Monomial> MemoryPlan::slotSizeTerms(unsigned s) const {
  std::vector<Monomial> terms;
  for (unsigned b : slots[s]) {
    const Monomial &bytes = buffers[b].bytes;
    auto same = llvm::find_if(terms, [&](const Monomial &t) {
      return t.symbols == bytes.symbols;
    });
    if (same == terms.end())
      terms.push_back(bytes);
    else if (same->factor < bytes.factor)
      *same = bytes;
  }
  return terms;
}

MemoryPlan planMemory(const KernelProgram &program, const ShapeInfo &shapes) {
  MemoryPlan plan;
  llvm::DenseMap<Value, unsigned> bufferOf;
  for (Value value : program.intermediates) {
    PlannedBuffer buffer;
    buffer.value = value;
    auto type = cast<RankedTensorType>(value.getType());
    buffer.bytes = product(shapes.dimsOf(value)) *
                   Monomial::constant(scalarTypeBytes(*scalarTypeOf(type.getElementType())));
    bufferOf[value] = plan.buffers.size();
    plan.buffers.push_back(std::move(buffer));
  }

  // Liveness in call order. The last argument of a call is its output.
  llvm::DenseSet<unsigned> written;
  for (auto [i, call] : llvm::enumerate(program.calls)) {
    for (auto [a, view] : llvm::enumerate(call.args)) {
      auto it = view.tensor ? bufferOf.find(view.tensor) : bufferOf.end();
      if (it == bufferOf.end())
        continue;
      PlannedBuffer &buffer = plan.buffers[it->second];
      bool isOutput = a + 1 == call.args.size();
      if (isOutput && written.insert(it->second).second) {
        buffer.firstCall = buffer.lastCall = i;
        continue;
      }
      buffer.lastCall = std::max<unsigned>(buffer.lastCall, i);
    }
  }

  // Greedy slot assignment in call order. A buffer read by call i is still
  // live at i, so a kernel's output never shares a slot with its inputs.
  std::vector<unsigned> bufferOfCall(program.calls.size(), ~0u);
  for (auto [b, buffer] : llvm::enumerate(plan.buffers))
    bufferOfCall[buffer.firstCall] = b;
  std::vector<bool> slotFree;
  std::vector<unsigned> liveInSlot; // buffer currently holding each slot
  for (unsigned i = 0; i < program.calls.size(); ++i) {
    for (unsigned s = 0; s < slotFree.size(); ++s)
      if (!slotFree[s] && plan.buffers[liveInSlot[s]].lastCall < i)
        slotFree[s] = true;
    unsigned b = bufferOfCall[i];
    if (b == ~0u)
      continue;
    PlannedBuffer &buffer = plan.buffers[b];
    // Prefer a free slot that already held a buffer of the same size, so
    // slots do not grow; then the lowest free slot; then a new one.
    int chosen = -1;
    for (unsigned s = 0; s < slotFree.size() && chosen < 0; ++s)
      if (slotFree[s] && llvm::any_of(plan.slots[s], [&](unsigned other) {
            return plan.buffers[other].bytes == buffer.bytes;
          }))
        chosen = s;
    for (unsigned s = 0; s < slotFree.size() && chosen < 0; ++s)
      if (slotFree[s])
        chosen = s;
    if (chosen < 0) {
      chosen = slotFree.size();
      slotFree.push_back(false);
      liveInSlot.push_back(b);
      plan.slots.emplace_back();
    }
    slotFree[chosen] = false;
    liveInSlot[chosen] = b;
    buffer.slot = chosen;
    plan.slots[chosen].push_back(b);
  }
  return plan;
}

std::string formatMemoryPlan(func::FuncOp func, const KernelProgram &program,
                             const MemoryPlan &plan, const ShapeInfo &shapes) {
  std::vector<std::string> names = shapes.symbolNames();
  AsmState state(func);
  auto valueName = [&](Value v) {
    std::string text;
    llvm::raw_string_ostream os(text);
    v.printAsOperand(os, state);
    return text;
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "symbols:";
  if (shapes.symbols.empty())
    os << " none";
  for (auto [i, symbol] : llvm::enumerate(shapes.symbols)) {
    os << " " << symbol.name;
    if (symbol.max >= 0)
      os << "<=" << symbol.max;
  }
  os << "\n";
  for (auto [s, buffers] : llvm::enumerate(plan.slots)) {
    std::vector<Monomial> terms = plan.slotSizeTerms(s);
    os << "slot " << s << ": bytes = ";
    if (terms.size() > 1)
      os << "max(";
    llvm::interleaveComma(terms, os, [&](const Monomial &m) { os << m.str(names); });
    os << (terms.size() > 1 ? ")" : "") << ", buffers";
    for (unsigned b : buffers)
      os << " " << valueName(plan.buffers[b].value);
    os << "\n";
  }
  for (const PlannedBuffer &buffer : plan.buffers)
    os << "buffer " << valueName(buffer.value) << " ("
       << buffer.value.getDefiningOp()->getName() << "): slot " << buffer.slot
       << ", bytes " << buffer.bytes.str(names) << ", live calls "
       << buffer.firstCall << ".." << buffer.lastCall << "\n";
  // Tensors that need no workspace, so the plan accounts for every value.
  Block &body = func.getBody().front();
  for (Operation &op : body.without_terminator())
    for (Value result : op.getResults()) {
      auto it = program.storage.find(result);
      if (it == program.storage.end()) {
        os << "alias " << valueName(result) << " (" << op.getName() << ") of "
           << valueName(op.getOperand(0)) << "\n";
        continue;
      }
      switch (it->second.kind) {
      case Storage::Output:
        os << "output " << it->second.index << ": " << valueName(result)
           << " (" << op.getName() << ")\n";
        break;
      case Storage::Weight:
        os << "weight " << valueName(result) << ": offset "
           << it->second.weightOffset << "\n";
        break;
      case Storage::Constant:
        os << "constant " << valueName(result) << ": " << it->second.global
           << "\n";
        break;
      default:
        break;
      }
    }
  return text;
}

} // namespace attune::codegen::host
