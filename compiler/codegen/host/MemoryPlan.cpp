//===- MemoryPlan.cpp - static workspace plan for intermediate tensors ----===//
//
// Step 3 of host code generation. Every tensor a kernel writes that is not a
// function result gets a buffer in the workspace. Buffers live from the call
// that writes them to the last call that reads them (a reshape reads through
// to its source, as views name storage roots). Walking the calls in order, a
// buffer takes a slot whose previous buffers are all dead, or, written by an
// element-wise kernel, the slot of an input that call reads for the last
// time, element for element (in place); which slot is decided here,
// statically, while slot sizes (the largest buffer in the slot) and offsets
// (64-aligned prefix sums) depend on the shape symbols and are computed by
// the host code at run time.
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

int64_t evaluate(const Monomial &m, llvm::ArrayRef<int64_t> symbols) {
  int64_t value = m.factor;
  for (unsigned s : m.symbols)
    value *= symbols[s];
  return value;
}

int64_t MemoryPlan::workspaceBytes(llvm::ArrayRef<int64_t> symbols) const {
  // As the emitted workspace_size computes it (LLVMEmitter's slotOffsets).
  int64_t total = 0;
  for (unsigned s = 0; s < slots.size(); ++s) {
    int64_t size = 0;
    for (const Monomial &term : slotSizeTerms(s))
      size = std::max(size, evaluate(term, symbols));
    total += (size + 63) & ~int64_t(63);
  }
  return total;
}

int64_t MemoryPlan::largestLiveBytes(llvm::ArrayRef<int64_t> symbols) const {
  unsigned calls = 0;
  for (const PlannedBuffer &buffer : buffers)
    calls = std::max(calls, buffer.lastCall + 1);
  int64_t largest = 0;
  for (unsigned i = 0; i < calls; ++i) {
    int64_t live = 0;
    for (const PlannedBuffer &buffer : buffers) {
      if (buffer.firstCall > i || buffer.lastCall < i)
        continue;
      // An input overwritten in place by call i's output is the same bytes.
      bool overwritten = llvm::any_of(buffers, [&](const PlannedBuffer &other) {
        return other.firstCall == i && other.inPlaceOf == &buffer - buffers.data();
      });
      if (!overwritten)
        live += evaluate(buffer.bytes, symbols);
    }
    largest = std::max(largest, live);
  }
  return largest;
}

/// Whether `kind` computes each output element from the input elements at
/// the same index only, reading each once before writing it: its output
/// may then overwrite an input read through the same view.
static bool isElementWise(KernelKind kind) {
  return kind == KernelKind::Unary || kind == KernelKind::Binary ||
         kind == KernelKind::Where || kind == KernelKind::CausalMask;
}

static bool sameGeometry(const BufferView &a, const BufferView &b) {
  return a.extents == b.extents && a.strides == b.strides && a.offset == b.offset &&
         a.type == b.type;
}

/// The buffer call `i` may overwrite in place with its output `out` (an
/// index into plan.buffers), or ~0u: an input of an element-wise kernel
/// that this call reads for the last time, through exactly the view the
/// output is written with, covering the whole of both buffers.
static unsigned inPlaceCandidate(const KernelCall &call, unsigned i, unsigned out,
                                 const MemoryPlan &plan,
                                 const llvm::DenseMap<Value, unsigned> &bufferOf) {
  if (!isElementWise(call.spec.kind) || call.args.size() < 2)
    return ~0u;
  const BufferView &output = call.args.back();
  const PlannedBuffer &written = plan.buffers[out];
  if (output.offset != Monomial::constant(0) ||
      product(output.extents) * Monomial::constant(scalarTypeBytes(output.type)) !=
          written.bytes)
    return ~0u;
  for (const BufferView &view : llvm::ArrayRef(call.args).drop_back()) {
    auto it = view.tensor ? bufferOf.find(view.tensor) : bufferOf.end();
    if (it == bufferOf.end())
      continue;
    const PlannedBuffer &input = plan.buffers[it->second];
    if (input.lastCall != i || input.bytes != written.bytes ||
        !sameGeometry(view, output))
      continue;
    // Every read of that buffer by this call must be the same view (add(x,
    // x) is fine; x beside a transposed x is not).
    bool onlyThisView = llvm::all_of(call.args, [&](const BufferView &other) {
      return &other == &output || other.tensor != view.tensor ||
             sameGeometry(other, view);
    });
    if (onlyThisView)
      return it->second;
  }
  return ~0u;
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
  // live at i, so a kernel's output shares a slot with one of its inputs
  // only in place (inPlaceCandidate).
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
    // In place first; else prefer a free slot that already held a buffer of
    // the same size, so slots do not grow; then the lowest free slot; then a
    // new one.
    int chosen = -1;
    unsigned overwritten = inPlaceCandidate(program.calls[i], i, b, plan, bufferOf);
    if (overwritten != ~0u) {
      buffer.inPlaceOf = overwritten;
      chosen = plan.buffers[overwritten].slot;
    }
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
       << buffer.firstCall << ".." << buffer.lastCall
       << (buffer.inPlaceOf == ~0u
               ? std::string()
               : ", in place of " + valueName(plan.buffers[buffer.inPlaceOf].value))
       << "\n";
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
