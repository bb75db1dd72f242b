//===- GraphGen.cpp - random attention graphs for attune-fuzz-graphs ------===//
//
// The generator writes MLIR text directly, tracking each value's shape, so
// that every program it writes is valid by construction (a program that does
// not verify is a generator bug, reported as such, never a compiler
// failure). Sizes stay small (<= 64) so a compile takes seconds, and head
// dims come from a short list so the kernel cache is reused across a run.
//
//===----------------------------------------------------------------------===//

#include "compiler/tools/attune-fuzz-graphs/GraphGen.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <cmath>
#include <random>
#include <sstream>

namespace attune::fuzzgraphs {
namespace {

/// One dimension: its static size, and a symbol name when it is dynamic
/// (the runtime then takes `size` from Program::dims).
struct Dim {
  int64_t size = 1;
  std::string sym;
  bool dynamic() const { return !sym.empty(); }
};
using Shape = std::vector<Dim>;

Dim fixed(int64_t n) { return Dim{n, ""}; }

struct Value {
  std::string name;
  Shape shape;
  std::string elt = "f32";
};

std::string typeOf(const Shape &shape, const std::string &elt) {
  std::string text = "tensor<";
  for (const Dim &d : shape)
    text += (d.dynamic() ? std::string("?") : std::to_string(d.size)) + "x";
  return text + elt + ">";
}
std::string typeOf(const Value &v) { return typeOf(v.shape, v.elt); }

/// An f32 literal MLIR parses back to the same float.
std::string floatLiteral(double x) {
  if (std::isinf(x))
    return x < 0 ? "0xFF800000" : "0x7F800000";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.9e", x);
  return text;
}

/// numpy broadcasting from the right; a static 1 yields to the other side.
Shape broadcast(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim *x = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
    const Dim *y = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
    if (!x)
      out[i] = *y;
    else if (!y)
      out[i] = *x;
    else if (!x->dynamic() && x->size == 1)
      out[i] = *y;
    else
      out[i] = *x;
  }
  return out;
}

class Builder {
public:
  explicit Builder(uint64_t seed) : rng(seed) {}

  std::mt19937_64 rng;

  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
  template <typename T> const T &pick(const std::vector<T> &xs) {
    return xs[uniform(0, xs.size() - 1)];
  }

  Value argument(const std::string &name, Shape shape, std::string elt = "f32") {
    Value v{"%" + name, std::move(shape), std::move(elt)};
    std::string names;
    for (const Dim &d : v.shape)
      names += std::string(names.empty() ? "" : ", ") + "\"" + d.sym + "\"";
    args.push_back(v.name + ": " + typeOf(v) + " {tfm.name = \"" + name +
                   "\", tfm.dim_names = [" + names + "]}");
    return v;
  }

  void result(const Value &v) { results.push_back(v); }

  Value fresh(Shape shape, std::string elt = "f32") {
    return Value{"%v" + std::to_string(counter++), std::move(shape), std::move(elt)};
  }

  void line(const std::string &text) { body += "    " + text + "\n"; }

  Value scalar(double x) {
    Value c = fresh({});
    line(c.name + " = arith.constant dense<" + floatLiteral(x) + "> : tensor<f32>");
    return c;
  }

  Value weight(const std::string &name, Shape shape, const std::string &init = "") {
    Value w = fresh(std::move(shape));
    std::string attrs = init.empty() ? " {std = 0.25 : f64}"
                                     : " {init = #tfm.init<" + init + ">}";
    line(w.name + " = tfm.weight \"" + name + "\"" + attrs + " : " + typeOf(w));
    return w;
  }

  Value binary(const std::string &op, const Value &a, const Value &b) {
    Value r = fresh(broadcast(a.shape, b.shape), a.elt);
    line(r.name + " = tfm." + op + " " + a.name + ", " + b.name + " : " + typeOf(a) +
         ", " + typeOf(b) + " -> " + typeOf(r));
    return r;
  }

  Value where(const Value &c, const Value &t, const Value &f) {
    Value r = fresh(broadcast(broadcast(c.shape, t.shape), f.shape), t.elt);
    line(r.name + " = tfm.where " + c.name + ", " + t.name + ", " + f.name + " : " +
         typeOf(c) + ", " + typeOf(t) + ", " + typeOf(f) + " -> " + typeOf(r));
    return r;
  }

  Value matmul(const Value &a, const Value &b, bool transposeB) {
    Shape shape = a.shape;
    shape.back() = transposeB ? b.shape[b.shape.size() - 2] : b.shape.back();
    Value r = fresh(shape);
    line(r.name + " = tfm.matmul " + a.name + ", " + b.name +
         (transposeB ? " {transpose_b = true}" : "") + " : " + typeOf(a) + ", " +
         typeOf(b) + " -> " + typeOf(r));
    return r;
  }

  Value transpose(const Value &x, const std::vector<int64_t> &perm) {
    Shape shape;
    std::string list;
    for (int64_t p : perm) {
      shape.push_back(x.shape[p]);
      list += (list.empty() ? "" : ", ") + std::to_string(p);
    }
    Value r = fresh(shape, x.elt);
    line(r.name + " = tfm.transpose " + x.name + " {permutation = array<i64: " + list +
         ">} : " + typeOf(x) + " -> " + typeOf(r));
    return r;
  }

  Value reshape(const Value &x, Shape shape) {
    Value r = fresh(std::move(shape), x.elt);
    line(r.name + " = tfm.reshape " + x.name + " : " + typeOf(x) + " -> " + typeOf(r));
    return r;
  }

  Value unary(const std::string &op, const Value &x, const std::string &attrs = "") {
    Value r = fresh(x.shape, x.elt);
    line(r.name + " = tfm." + op + " " + x.name + attrs + " : " + typeOf(x) + " -> " +
         typeOf(r));
    return r;
  }

  Value repeatHeads(const Value &x, int64_t repeats) {
    Shape shape = x.shape;
    shape[1].size *= repeats;
    Value r = fresh(shape);
    line(r.name + " = tfm.repeat_interleave " + x.name + " {axis = 1 : i64, repeats = " +
         std::to_string(repeats) + " : i64} : " + typeOf(x) + " -> " + typeOf(r));
    return r;
  }

  Value norm(const Value &x, const std::string &prefix) {
    int64_t e = x.shape.back().size;
    if (chance(0.5)) {
      Value g = weight(prefix + ".ln.weight", {fixed(e)}, "ones");
      Value b = weight(prefix + ".ln.bias", {fixed(e)}, "zeros");
      Value r = fresh(x.shape);
      line(r.name + " = tfm.layer_norm " + x.name + ", " + g.name + ", " + b.name +
           " {epsilon = 1.0e-05 : f64} : " + typeOf(x) + ", " + typeOf(g) + ", " +
           typeOf(b) + " -> " + typeOf(r));
      return r;
    }
    Value g = weight(prefix + ".rms.weight", {fixed(e)});
    Value r = fresh(x.shape);
    line(r.name + " = tfm.rms_norm " + x.name + ", " + g.name +
         " {epsilon = 1.0e-06 : f64} : " + typeOf(x) + ", " + typeOf(g) + " -> " +
         typeOf(r));
    return r;
  }

  Value linear(const Value &x, int64_t n, const std::string &name) {
    int64_t k = x.shape.back().size;
    Value w = weight(name + ".weight", {fixed(k), fixed(n)});
    bool bias = chance(0.6);
    Value b;
    if (bias)
      b = weight(name + ".bias", {fixed(n)});
    Shape shape = x.shape;
    shape.back() = fixed(n);
    Value r = fresh(shape);
    line(r.name + " = tfm.linear " + x.name + ", " + w.name +
         (bias ? ", " + b.name : std::string()) + " : " + typeOf(x) + ", " + typeOf(w) +
         (bias ? ", " + typeOf(b) : std::string()) + " -> " + typeOf(r));
    return r;
  }

  std::string module() const {
    std::string text = "module {\n  func.func @fuzz(";
    for (auto [i, a] : llvm::enumerate(args))
      text += (i ? ",\n      " : "") + a;
    text += ")\n      -> (";
    for (auto [i, r] : llvm::enumerate(results))
      text += (i ? ", " : "") + typeOf(r) + " {tfm.name = \"out" + std::to_string(i) + "\"}";
    text += ") {\n" + body + "    return ";
    for (auto [i, r] : llvm::enumerate(results))
      text += (i ? ", " : "") + r.name;
    text += " : ";
    for (auto [i, r] : llvm::enumerate(results))
      text += (i ? ", " : "") + typeOf(r);
    return text + "\n  }\n}\n";
  }

private:
  std::vector<std::string> args;
  std::vector<Value> results;
  std::string body;
  int counter = 0;
};

/// The sizes of one attention site.
struct SiteShape {
  int64_t b, h, hkv, d, dv;
  Dim sq, sk;
};

/// Near misses: spellings next to a recognised one whose fused form would be
/// wrong (or is only right if the matcher keeps the difference).
enum class NearMiss { None, MulZeroOne, SoftmaxOverQueries, ScaleOnV, ProbsOut, MaskBeforeScale };

enum class MaskKind { Additive, Where, Causal, KeyPaddingBool, KeyPaddingAdditive };

struct Generator {
  Builder &g;
  Program &program;
  int maskInputs = 0;
  /// The last applyMask was a tfm.where filling -1e9, a value a score can
  /// shift (f32's step there is 64; finfo.min absorbs any score).
  bool lastWhereFillShiftable = false;
  /// The site has a finite-valued tfm.causal_mask that may mask whole rows
  /// (Sq > Sk, or not known statically): causal in the fused op would
  /// output 0 there, so the pass must leave it.
  bool causalFiniteRows = false;
  /// The site has a finite-valued tfm.causal_mask: fused only when it is the
  /// only mask term (another could mask the rest of a row).
  bool finiteCausalMask = false;

  void describe(const std::string &what) {
    program.description += (program.description.empty() ? "" : " ") + what;
  }

  std::string maskName(const std::string &role) {
    return role + std::to_string(maskInputs++);
  }

  /// Adds one mask term to the scores `s` [B, H, Sq, Sk].
  Value applyMask(MaskKind kind, Value s, const SiteShape &sh, bool &finiteFill) {
    switch (kind) {
    case MaskKind::Additive: {
      std::vector<Shape> shapes = {{fixed(sh.b), fixed(1), fixed(1), sh.sk},
                                   {sh.sq, sh.sk},
                                   {fixed(1), fixed(sh.h), sh.sq, sh.sk},
                                   {fixed(1), fixed(1), sh.sq, sh.sk}};
      int which = g.uniform(0, shapes.size() - 1);
      // A learned bias (T5, ALiBi as a tensor) or a 0/-inf mask.
      bool bias = g.chance(0.3);
      Value m = g.argument(maskName(bias ? "bias" : "addmask"), shapes[which]);
      describe(std::string(bias ? "bias" : "add-mask") + "[" + std::to_string(which) + "]");
      return g.chance(0.5) ? g.binary("add", s, m) : g.binary("add", m, s);
    }
    case MaskKind::Where: {
      std::vector<Shape> shapes = {{fixed(1), fixed(1), sh.sq, sh.sk}, {sh.sq, sh.sk}};
      int which = g.uniform(0, 1);
      std::string elt = g.pick<std::string>({"i1", "i1", "i64", "i32"});
      // -inf, -1e9 (masked_fill(mask == 0, -1e9)), finfo(f32).min.
      int fillKind = g.uniform(0, 2);
      double fill = fillKind == 0 ? -INFINITY : fillKind == 1 ? -1e9 : -3.40282347e38;
      finiteFill |= fillKind != 0;
      lastWhereFillShiftable = fillKind == 1;
      Value f = g.scalar(fill);
      bool keep = g.chance(0.5);
      Value c = g.argument(maskName(keep ? "keep" : "drop"), shapes[which], elt);
      describe("where-" + std::string(keep ? "keep" : "drop") + "-" + elt + "-" +
               (fillKind == 0 ? "ninf" : fillKind == 1 ? "1e9" : "finfo"));
      return keep ? g.where(c, s, f) : g.where(c, f, s);
    }
    case MaskKind::Causal: {
      if (sh.sq.dynamic() || sh.sk.dynamic() || g.chance(0.6)) {
        if (g.chance(0.7)) {
          describe("causal");
          return g.unary("causal_mask", s);
        }
        // tfm.causal_mask with a finite value: where Sq > Sk the first rows
        // see no key and average v uniformly.
        bool finfo = g.chance(0.5);
        finiteFill = true;
        finiteCausalMask = true;
        causalFiniteRows |= sh.sq.dynamic() || sh.sk.dynamic() || sh.sq.size > sh.sk.size;
        describe(finfo ? "causal-finfo" : "causal-1e9");
        return g.unary("causal_mask", s,
                       std::string(" {value = ") + (finfo ? "-3.40282347E+38" : "-1.0e+09") +
                           " : f64}");
      }
      // Hugging Face GPT-2: where(bias[:, :, :Sq, :Sk], s, finfo.min) with
      // the constant lower triangle, aligned at the last key.
      std::string rows;
      for (int64_t i = 0; i < sh.sq.size; ++i) {
        std::string row;
        for (int64_t j = 0; j < sh.sk.size; ++j)
          row += std::string(j ? ", " : "") +
                 (j <= i + (sh.sk.size - sh.sq.size) ? "true" : "false");
        rows += std::string(i ? ", " : "") + "[" + row + "]";
      }
      Value c = g.fresh({fixed(1), fixed(1), sh.sq, sh.sk}, "i1");
      g.line(c.name + " = arith.constant dense<[[[" + rows + "]]]> : " + typeOf(c));
      bool finfo = g.chance(0.5);
      finiteFill |= finfo;
      describe(finfo ? "causal-constant-finfo" : "causal-constant-ninf");
      return g.where(c, s, g.scalar(finfo ? -3.40282347e38 : -INFINITY));
    }
    case MaskKind::KeyPaddingBool: {
      std::string elt = g.pick<std::string>({"i1", "i64"});
      Value kp = g.argument(maskName("keep_kp"), {fixed(sh.b), sh.sk}, elt);
      Value c = g.reshape(kp, {fixed(sh.b), fixed(1), fixed(1), sh.sk});
      Value f = g.scalar(-INFINITY);
      describe("key-padding-" + elt);
      return g.where(c, s, f);
    }
    case MaskKind::KeyPaddingAdditive: {
      if (g.chance(0.5)) {
        // BERT's extended attention mask, computed in the graph:
        // (1 - attention_mask.float()) * -10000 (or finfo.min), [B,1,1,Sk].
        // With -10000 a fully padded row is not absorbed (the f32 ulp at 1e4
        // is 1e-3: the scores keep a few bits and any two correct orders of
        // rounding differ by more than the tolerance), so its input
        // ("keeprow") always leaves a key; finfo.min absorbs them.
        std::string elt = g.pick<std::string>({"i64", "i1"});
        bool finfo = g.chance(0.5);
        Value kp = g.argument(maskName(finfo ? "keep_kp" : "keeprow_kp"), {fixed(sh.b), sh.sk},
                              elt);
        Value f = g.fresh(kp.shape);
        g.line(f.name + " = tfm.cast " + kp.name + " : " + typeOf(kp) + " -> " + typeOf(f));
        Value inv = g.binary("sub", g.scalar(1.0), f);
        Value m = g.binary("mul", inv, g.scalar(finfo ? -3.40282347e38 : -10000.0));
        Value m4 = g.reshape(m, {fixed(sh.b), fixed(1), fixed(1), sh.sk});
        describe(std::string("bert-extended-mask-") + elt + (finfo ? "-finfo" : "-1e4"));
        return g.binary("add", s, m4);
      }
      Value kp = g.argument(maskName("addmask_kp"), {fixed(sh.b), sh.sk});
      Value m = g.reshape(kp, {fixed(sh.b), fixed(1), fixed(1), sh.sk});
      describe("key-padding-additive");
      return g.binary("add", s, m);
    }
    }
    return s;
  }

  /// One attention site on q [B, H, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv,
  /// Sk, Dv]; returns [B, H, Sq, Dv]. May add the probabilities to the
  /// function's results (a near miss).
  Value site(Value q, Value k, Value v, const SiteShape &sh) {
    bool staticScores = !sh.sq.dynamic() && !sh.sk.dynamic();
    NearMiss miss = NearMiss::None;
    if (g.chance(0.3)) {
      std::vector<NearMiss> misses = {NearMiss::SoftmaxOverQueries, NearMiss::ScaleOnV,
                                      NearMiss::ProbsOut, NearMiss::MaskBeforeScale};
      // One element would be a splat, which is a scale (0 or 1), not a mask.
      if (staticScores && sh.sq.size * sh.sk.size >= 2)
        misses.push_back(NearMiss::MulZeroOne);
      miss = g.pick(misses);
    }
    Expect expect = Expect::Fuse;

    if (sh.hkv < sh.h) {
      describe(sh.hkv == 1 ? "mqa" : "gqa");
      k = g.repeatHeads(k, sh.h / sh.hkv);
      v = g.repeatHeads(v, sh.h / sh.hkv);
    }
    if (sh.sq.size != sh.sk.size || sh.sq.sym != sh.sk.sym)
      describe("sq!=sk");
    if (sh.d != sh.dv)
      describe("dv!=d");

    // The scale: 1/sqrt(d) as exporters write it, sometimes another value.
    double scale = g.chance(0.8) ? 1.0 / std::sqrt(double(sh.d)) : 0.5;
    enum { AfterMul, AfterMulLeft, AfterDiv, OnQ, OnQK, NoScale } where =
        static_cast<decltype(AfterMul)>(g.uniform(0, 5));
    static const char *scaleNames[] = {"scale-mul", "scale-mul-left", "scale-div",
                                       "scale-on-q", "scale-on-qk", "no-scale"};
    describe(scaleNames[where]);
    if (where == OnQ)
      q = g.binary("mul", q, g.scalar(scale));
    if (where == OnQK) {
      Value c = g.scalar(std::sqrt(scale));
      q = g.binary("mul", q, c);
      k = g.binary("mul", k, c);
    }
    if (miss == NearMiss::ScaleOnV) {
      // v * c: the fused op may take the scaled v, but c must not move into
      // the scores.
      describe("near-miss:scale-on-v");
      v = g.binary("mul", v, g.scalar(0.5 + g.uniform(0, 4) * 0.25));
      expect = Expect::Either;
    }

    Value s;
    if (g.chance(0.5)) {
      describe("transpose_b");
      s = g.matmul(q, k, /*transposeB=*/true);
    } else {
      Value kt = g.transpose(k, {0, 1, 3, 2});
      s = g.matmul(q, kt, /*transposeB=*/false);
    }

    auto applyScale = [&](Value x) {
      switch (where) {
      case AfterMul:
        return g.binary("mul", x, g.scalar(scale));
      case AfterMulLeft:
        return g.binary("mul", g.scalar(scale), x);
      case AfterDiv:
        return g.binary("div", x, g.scalar(1.0 / scale));
      default:
        return x;
      }
    };

    // Masks: up to three terms, each kind at most once, except that a second
    // tfm.where with its own fill is allowed (two masked_fills in a row).
    std::vector<MaskKind> kinds;
    int numMasks = g.uniform(0, 3);
    for (int i = 0; i < numMasks; ++i) {
      MaskKind kind = static_cast<MaskKind>(g.uniform(0, 4));
      if (kind != MaskKind::Where && llvm::is_contained(kinds, kind))
        continue;
      kinds.push_back(kind);
    }
    if (miss == NearMiss::MulZeroOne) {
      // A multiplicative 0/1 mask: not a mask at all (exp(0) still counts).
      // Right on the product, before any -inf mask (-inf * 0 is NaN).
      describe("near-miss:mul-0/1");
      // Both values: all ones or all zeros is a splat, which the pass reads
      // as a scale (1 or 0), rightly.
      std::vector<bool> ones;
      for (int64_t i = 0; i < sh.sq.size * sh.sk.size; ++i)
        ones.push_back(g.chance(0.7));
      if (llvm::all_equal(ones))
        ones.back() = !ones.back();
      std::string rows;
      for (int64_t i = 0; i < sh.sq.size; ++i) {
        std::string row;
        for (int64_t j = 0; j < sh.sk.size; ++j)
          row += std::string(j ? ", " : "") + (ones[i * sh.sk.size + j] ? "1.0" : "0.0");
        rows += std::string(i ? ", " : "") + "[" + row + "]";
      }
      Value m = g.fresh({sh.sq, sh.sk});
      g.line(m.name + " = arith.constant dense<[" + rows + "]> : " + typeOf(m));
      s = g.binary("mul", s, m);
      expect = Expect::NotFuse;
    }

    // A tfm.where with a finite fill over another mask term replaces what
    // that term masked; the fused op's sum of masks would not (a row with
    // every key masked differs), so the pass leaves it alone.
    bool finiteOverMask = false;
    // A where filling -1e9 (which a score shifts: f32's step there is 64)
    // with an additive term after it: on a row whose every key the where
    // masks the graph weights that term, which the fused op cannot.
    bool additiveAfterShiftableFill = false;
    auto applyMasks = [&] {
      bool shiftableFill = false;
      for (auto [i, kind] : llvm::enumerate(kinds)) {
        bool finiteFill = false;
        lastWhereFillShiftable = false;
        s = applyMask(kind, s, sh, finiteFill);
        finiteOverMask |= i > 0 && finiteFill;
        bool additive = kind == MaskKind::Additive || kind == MaskKind::KeyPaddingAdditive;
        additiveAfterShiftableFill |= shiftableFill && additive;
        shiftableFill |= lastWhereFillShiftable;
      }
    };
    if (miss == NearMiss::MaskBeforeScale && !kinds.empty()) {
      // (s + m) * c: only right fused if the mask is scaled too.
      describe("near-miss:mask-before-scale");
      expect = Expect::Either;
      applyMasks();
      s = applyScale(s);
    } else {
      s = applyScale(s);
      if (g.chance(0.15)) {
        // Softcapping, c * tanh(s / c) (Gemma 2's, ONNX Attention's), before
        // the masks; a mask inside the tanh is capped too (-inf becomes -c),
        // which the fused op's softcap does not do.
        static const double caps[] = {1.0, 2.0, 5.0, 30.0};
        const double c = caps[g.uniform(0, 3)];
        const bool maskInside = !kinds.empty() && g.chance(0.3);
        if (maskInside) {
          describe("near-miss:mask-inside-softcap");
          applyMasks();
          expect = Expect::NotFuse;
        }
        describe("softcap");
        Value inner = g.chance(0.5) ? g.binary("div", s, g.scalar(c))
                                    : g.binary("mul", s, g.scalar(1.0 / c));
        Value capped = g.unary("tanh", inner);
        s = g.chance(0.5) ? g.binary("mul", capped, g.scalar(c))
                          : g.binary("mul", g.scalar(c), capped);
        if (!maskInside)
          applyMasks();
      } else {
        applyMasks();
      }
    }
    if (finiteOverMask) {
      describe("near-miss:finite-fill-over-mask");
      expect = Expect::NotFuse;
    }
    if (additiveAfterShiftableFill) {
      describe("near-miss:additive-after-1e9-fill");
      expect = Expect::NotFuse;
    }
    if (finiteCausalMask && (causalFiniteRows || kinds.size() > 1)) {
      describe("near-miss:finite-causal-not-alone");
      expect = Expect::NotFuse;
    }
    causalFiniteRows = finiteCausalMask = false;

    Value p;
    if (miss == NearMiss::SoftmaxOverQueries) {
      // softmax(dim=-2), written as the last axis of the transposed scores
      // (code generation takes only the last axis).
      describe("near-miss:softmax-over-queries");
      Value t = g.transpose(s, {0, 1, 3, 2});
      Value pt = g.unary("softmax", t, " {axis = -1 : i64}");
      p = g.transpose(pt, {0, 1, 3, 2});
      expect = Expect::NotFuse;
    } else {
      p = g.unary("softmax", s, g.chance(0.5) ? " {axis = -1 : i64}" : " {axis = 3 : i64}");
    }
    if (miss == NearMiss::ProbsOut) {
      // output_attentions=True: the probabilities are a result too.
      describe("near-miss:probs-out");
      g.result(p);
      expect = Expect::Either;
    }
    program.sites.push_back(expect);
    return g.matmul(p, v, /*transposeB=*/false);
  }
};

} // namespace

Program generateProgram(uint64_t seed, uint64_t index) {
  // Mixed so that neighbouring seeds and indices give unrelated streams.
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32)};
  std::mt19937_64 init(seq);
  Builder g(init());
  Program program;
  Generator gen{g, program};

  SiteShape sh;
  sh.b = g.uniform(1, 2);
  sh.h = g.pick<int64_t>({1, 2, 4});
  sh.hkv = g.chance(0.6) ? sh.h : g.pick<int64_t>({1, std::max<int64_t>(1, sh.h / 2)});
  sh.d = g.pick<int64_t>({8, 16, 32});
  sh.dv = g.chance(0.75) ? sh.d : g.pick<int64_t>({8, 16});
  bool dynamic = g.chance(0.5);
  bool block = g.chance(0.5);
  bool cross = g.chance(block ? 0.25 : 0.5);
  int64_t sq = g.uniform(1, 10), sk = cross ? g.uniform(1, 12) : sq;
  if (dynamic) {
    sh.sq = Dim{sq, cross ? "sq" : "seq"};
    sh.sk = Dim{sk, cross ? "sk" : "seq"};
    program.dims[sh.sq.sym] = sq;
    program.dims[sh.sk.sym] = sk;
  } else {
    sh.sq = fixed(sq);
    sh.sk = fixed(sk);
  }
  gen.describe(std::string(dynamic ? "dynamic" : "static") + " b" + std::to_string(sh.b) +
               " h" + std::to_string(sh.h) + "/" + std::to_string(sh.hkv) + " sq" +
               std::to_string(sq) + " sk" + std::to_string(sk) + " d" +
               std::to_string(sh.d) + " dv" + std::to_string(sh.dv));

  if (!block) {
    // The attention core on q, k, v as inputs.
    Value q = g.argument("q", {fixed(sh.b), fixed(sh.h), sh.sq, fixed(sh.d)});
    Value k = g.argument("k", {fixed(sh.b), fixed(sh.hkv), sh.sk, fixed(sh.d)});
    Value v = g.argument("v", {fixed(sh.b), fixed(sh.hkv), sh.sk, fixed(sh.dv)});
    Value o = gen.site(q, k, v, sh);
    if (g.chance(0.4)) {
      // Merge the heads and normalise, as the rest of a block would.
      Value t = g.transpose(o, {0, 2, 1, 3});
      Value m = g.reshape(t, {fixed(sh.b), sh.sq, fixed(sh.h * sh.dv)});
      o = g.norm(m, "out");
      gen.describe("merge-heads");
    }
    g.result(o);
  } else {
    // Pre-norm blocks: norm, q/k/v projections, heads split by reshape and
    // transpose, attention, heads merged, output projection, residual add.
    // Self-attention blocks may repeat; a cross-attention block reads `mem`.
    int64_t e = g.pick<int64_t>({16, 32, 64});
    Value x = g.argument("x", {fixed(sh.b), sh.sq, fixed(e)});
    Value mem;
    if (cross)
      mem = g.argument("mem", {fixed(sh.b), sh.sk, fixed(e)});
    int blocks = cross ? 1 : g.uniform(1, 2);
    gen.describe(std::string(cross ? "cross-" : "self-") + "block x" + std::to_string(blocks));
    for (int i = 0; i < blocks; ++i) {
      std::string p = "l" + std::to_string(i);
      Value h = g.norm(x, p);
      Value kvIn = cross ? mem : h;
      auto heads = [&](const Value &in, int64_t n, int64_t d, const Dim &s,
                       const std::string &name) {
        Value l = g.linear(in, n * d, p + "." + name);
        Value r = g.reshape(l, {fixed(sh.b), s, fixed(n), fixed(d)});
        return g.transpose(r, {0, 2, 1, 3});
      };
      Value q = heads(h, sh.h, sh.d, sh.sq, "q");
      Value k = heads(kvIn, sh.hkv, sh.d, sh.sk, "k");
      Value v = heads(kvIn, sh.hkv, sh.dv, sh.sk, "v");
      Value o = gen.site(q, k, v, sh);
      Value t = g.transpose(o, {0, 2, 1, 3});
      Value m = g.reshape(t, {fixed(sh.b), sh.sq, fixed(sh.h * sh.dv)});
      Value y = g.linear(m, e, p + ".o");
      x = g.chance(0.8) ? g.binary("add", x, y) : y;
      if (g.chance(0.3))
        x = g.unary("gelu", x);
    }
    g.result(x);
  }
  program.mlir = g.module();
  return program;
}

std::string programHeader(const Program &program, const std::string &note) {
  std::string text = "// fuzz-dims:";
  for (const auto &[name, value] : program.dims)
    text += " " + name + "=" + std::to_string(value);
  text += "\n// fuzz-expect:";
  for (Expect e : program.sites)
    text += e == Expect::Fuse ? " fuse" : e == Expect::NotFuse ? " not-fuse" : " either";
  text += "\n";
  if (program.inputSeed)
    text += "// fuzz-input-seed: " + std::to_string(program.inputSeed) + "\n";
  if (!program.description.empty())
    text += "// spellings: " + program.description + "\n";
  if (!note.empty())
    for (llvm::StringRef line : llvm::split(llvm::StringRef(note).rtrim(), '\n'))
      text += "// " + line.str() + "\n";
  return text;
}

Program parseProgramFile(const std::string &text) {
  Program program;
  program.mlir = text;
  for (llvm::StringRef line : llvm::split(text, '\n')) {
    line = line.trim();
    if (line.consume_front("// fuzz-dims:")) {
      llvm::SmallVector<llvm::StringRef> items;
      line.split(items, ' ', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef item : items) {
        auto [name, value] = item.split('=');
        int64_t n = 0;
        if (!value.getAsInteger(10, n))
          program.dims[name.str()] = n;
      }
    } else if (line.consume_front("// fuzz-expect:")) {
      llvm::SmallVector<llvm::StringRef> items;
      line.split(items, ' ', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef item : items)
        program.sites.push_back(item == "fuse"       ? Expect::Fuse
                                : item == "not-fuse" ? Expect::NotFuse
                                                     : Expect::Either);
    } else if (line.consume_front("// fuzz-input-seed:")) {
      (void)line.trim().getAsInteger(10, program.inputSeed);
    } else if (line.consume_front("// spellings:")) {
      program.description = line.trim().str();
    }
  }
  return program;
}

InputRole inputRole(const std::string &name) {
  llvm::StringRef n(name);
  if (n.starts_with("keeprow"))
    return InputRole::KeepSomeKey;
  if (n.starts_with("keep"))
    return InputRole::Keep;
  if (n.starts_with("drop"))
    return InputRole::Drop;
  if (n.starts_with("addmask"))
    return InputRole::Additive;
  if (n.starts_with("bias"))
    return InputRole::Bias;
  return InputRole::Data;
}

} // namespace attune::fuzzgraphs
