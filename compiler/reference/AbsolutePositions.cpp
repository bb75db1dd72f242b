//===- AbsolutePositions.cpp - reference absolute position encodings ------===//
//
// Plain loops in double over the formulas of TfmOps.td; no code is shared
// with the kernels or with the dialect's fold of tfm.recursive_position,
// which these functions check.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/AbsolutePositions.h"
#include "compiler/frontends/Support.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

namespace attune::reference::detail {

namespace {

Tensor zeros(std::vector<int64_t> shape) {
  Tensor t;
  t.shape = std::move(shape);
  t.data.assign(static_cast<size_t>(t.numElements()), 0.0);
  return t;
}

/// `t` has rank `rank`; `name` is the operand's ODS name.
llvm::Error checkRank(llvm::StringRef name, const Tensor &t, size_t rank) {
  if (t.shape.size() == rank)
    return llvm::Error::success();
  return makeError(llvm::formatv("expected '{0}' rank {1}, got {2}", name, rank,
                                 t.shape.size()));
}

/// `t` has shape `shape`.
llvm::Error checkShape(llvm::StringRef name, const Tensor &t,
                       llvm::ArrayRef<int64_t> shape) {
  if (llvm::ArrayRef<int64_t>(t.shape) == shape)
    return llvm::Error::success();
  return makeError(llvm::formatv("expected '{0}' of shape {1}, got {2}", name,
                                 shapeString(shape), shapeString(t.shape)));
}

} // namespace

double sinusoid(tfm::SinusoidalFormKind form, int64_t s, int64_t d, int64_t D,
                double minTimescale, double maxTimescale) {
  double pos = static_cast<double>(s);
  if (form == tfm::SinusoidalFormKind::interleaved) {
    // Vaswani et al.: div[i] = exp(2i * -ln(max_ts) / D); sin on even
    // columns, cos on odd ones.
    int64_t i = d / 2;
    double div = std::exp(static_cast<double>(2 * i) *
                          (-std::log(maxTimescale) / static_cast<double>(D)));
    return d % 2 == 0 ? std::sin(pos * div) : std::cos(pos * div);
  }
  // tensor2tensor get_timing_signal_1d: [sin | cos] halves of n = D / 2
  // columns each, a zero column last when D is odd.
  int64_t n = D / 2;
  if (d >= 2 * n)
    return 0.0;
  int64_t i = d < n ? d : d - n;
  double logIncrement = std::log(maxTimescale / minTimescale) /
                        static_cast<double>(std::max<int64_t>(n - 1, 1));
  double inv = minTimescale * std::exp(-static_cast<double>(i) * logIncrement);
  return d < n ? std::sin(pos * inv) : std::cos(pos * inv);
}

llvm::Expected<Tensor> multiplicativePosition(const Tensor &input, const Tensor *table,
                                              tfm::SinusoidalFormKind form,
                                              double minTimescale,
                                              double maxTimescale) {
  if (llvm::Error err = checkRank("input", input, 3))
    return std::move(err);
  const int64_t B = input.shape[0], S = input.shape[1], D = input.shape[2];
  if (table) {
    if (llvm::Error err = checkRank("table", *table, 2))
      return std::move(err);
    if (table->shape[1] != D)
      return makeError(llvm::formatv("expected 'table' width {0} (the input's "
                                     "last dimension), got {1}",
                                     D, table->shape[1]));
    if (S > table->shape[0])
      return makeError(llvm::formatv("sequence length {0} exceeds the position "
                                     "table's {1} rows",
                                     S, table->shape[0]));
  } else if (!(minTimescale > 0) || !(maxTimescale > 0)) {
    return makeError(llvm::formatv("expected positive timescales, got min {0} "
                                   "and max {1}",
                                   minTimescale, maxTimescale));
  }
  Tensor out = zeros(input.shape);
  for (int64_t s = 0; s < S; ++s)
    for (int64_t d = 0; d < D; ++d) {
      double p = table ? table->data[s * D + d]
                       : sinusoid(form, s, d, D, minTimescale, maxTimescale);
      for (int64_t b = 0; b < B; ++b)
        out.data[(b * S + s) * D + d] = input.data[(b * S + s) * D + d] * p;
    }
  return out;
}

llvm::Expected<Tensor> recursivePosition(const Tensor &input, const Tensor &p0,
                                         const Tensor &w1, const Tensor &b1,
                                         const Tensor &w2, const Tensor &b2,
                                         double timeStep) {
  if (llvm::Error err = checkRank("input", input, 3))
    return std::move(err);
  if (llvm::Error err = checkRank("b1", b1, 1))
    return std::move(err);
  const int64_t B = input.shape[0], S = input.shape[1], D = input.shape[2];
  const int64_t H = b1.shape[0];
  if (llvm::Error err = checkShape("p0", p0, {D}))
    return std::move(err);
  if (llvm::Error err = checkShape("w1", w1, {D + 1, H}))
    return std::move(err);
  if (llvm::Error err = checkShape("w2", w2, {H + 1, D}))
    return std::move(err);
  if (llvm::Error err = checkShape("b2", b2, {D}))
    return std::move(err);

  // p_0 = p0; p_{k+1} = p_k + T * h(t_k, p_k), t_k = k T, with
  // h(t, q) = [relu([q, t] w1 + b1), t] w2 + b2 (row vectors; w1 [D + 1, H]
  // and w2 [H + 1, D], the last row of each multiplying t).
  std::vector<double> positions(S * D);
  std::vector<double> p(p0.data), hidden(H);
  for (int64_t k = 0; k < S; ++k) {
    std::copy(p.begin(), p.end(), positions.begin() + k * D);
    const double t = static_cast<double>(k) * timeStep;
    for (int64_t j = 0; j < H; ++j) {
      double a = b1.data[j] + t * w1.data[D * H + j];
      for (int64_t i = 0; i < D; ++i)
        a += p[i] * w1.data[i * H + j];
      hidden[j] = std::max(a, 0.0);
    }
    for (int64_t d = 0; d < D; ++d) {
      double h = b2.data[d] + t * w2.data[H * D + d];
      for (int64_t j = 0; j < H; ++j)
        h += hidden[j] * w2.data[j * D + d];
      p[d] += timeStep * h;
    }
  }
  Tensor out = zeros(input.shape);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t d = 0; d < D; ++d)
        out.data[(b * S + s) * D + d] =
            input.data[(b * S + s) * D + d] + positions[s * D + d];
  return out;
}

llvm::Expected<Tensor> complexEmbedding(const Tensor &ids, const Tensor &amplitude,
                                        const Tensor &frequency, const Tensor &phase,
                                        int64_t firstPosition) {
  if (llvm::Error err = checkRank("ids", ids, 2))
    return std::move(err);
  if (llvm::Error err = checkRank("amplitude", amplitude, 2))
    return std::move(err);
  if (llvm::Error err = checkShape("frequency", frequency, amplitude.shape))
    return std::move(err);
  if (llvm::Error err = checkShape("phase", phase, amplitude.shape))
    return std::move(err);
  const int64_t B = ids.shape[0], S = ids.shape[1];
  const int64_t V = amplitude.shape[0], D = amplitude.shape[1];
  Tensor out = zeros({B, S, 2 * D});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      double raw = ids.data[b * S + s];
      if (!(raw >= 0 && raw < static_cast<double>(V)) || raw != std::floor(raw)) {
        // Ids come from integer tensors: print them as integers.
        std::string id = std::isfinite(raw) && std::abs(raw) < 0x1.0p63
                             ? std::to_string(static_cast<int64_t>(raw))
                             : std::to_string(raw);
        return makeError(llvm::formatv("id {0} at ids[{1}, {2}] is outside the "
                                       "tables' range [0, {3})",
                                       id, b, s, V));
      }
      const int64_t j = static_cast<int64_t>(raw);
      const double k = static_cast<double>(s + firstPosition);
      double *row = &out.data[(b * S + s) * 2 * D];
      for (int64_t d = 0; d < D; ++d) {
        // r e^{i (omega k + theta)} = r cos(.) + i r sin(.)
        double angle = frequency.data[j * D + d] * k + phase.data[j * D + d];
        row[d] = amplitude.data[j * D + d] * std::cos(angle);
        row[D + d] = amplitude.data[j * D + d] * std::sin(angle);
      }
    }
  return out;
}

llvm::Expected<Tensor> complexLinear(const Tensor &input, const Tensor &weightReal,
                                     const Tensor &weightImag, const Tensor *biasReal,
                                     const Tensor *biasImag) {
  if (input.shape.empty())
    return makeError("expected 'input' of rank at least 1, got a scalar");
  if (llvm::Error err = checkRank("weight_real", weightReal, 2))
    return std::move(err);
  if (llvm::Error err = checkShape("weight_imag", weightImag, weightReal.shape))
    return std::move(err);
  const int64_t K = weightReal.shape[0], N = weightReal.shape[1];
  if (input.shape.back() != 2 * K)
    return makeError(llvm::formatv("expected 'input' last dimension 2 * {0} (real "
                                   "and imaginary halves), got {1}",
                                   K, input.shape.back()));
  if (bool(biasReal) != bool(biasImag))
    return makeError("expected 'bias_real' and 'bias_imag' together");
  if (biasReal) {
    if (llvm::Error err = checkShape("bias_real", *biasReal, {N}))
      return std::move(err);
    if (llvm::Error err = checkShape("bias_imag", *biasImag, {N}))
      return std::move(err);
  }
  std::vector<int64_t> shape = input.shape;
  shape.back() = 2 * N;
  Tensor out = zeros(shape);
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < input.shape.size(); ++i)
    rows *= input.shape[i];
  for (int64_t r = 0; r < rows; ++r) {
    const double *xr = &input.data[r * 2 * K], *xi = xr + K;
    double *yr = &out.data[r * 2 * N], *yi = yr + N;
    for (int64_t n = 0; n < N; ++n) {
      // (x_r + i x_i)(W_r + i W_i) = x_r W_r - x_i W_i + i (x_r W_i + x_i W_r)
      double re = biasReal ? biasReal->data[n] : 0.0;
      double im = biasImag ? biasImag->data[n] : 0.0;
      for (int64_t k = 0; k < K; ++k) {
        double wr = weightReal.data[k * N + n], wi = weightImag.data[k * N + n];
        re += xr[k] * wr - xi[k] * wi;
        im += xr[k] * wi + xi[k] * wr;
      }
      yr[n] = re;
      yi[n] = im;
    }
  }
  return out;
}

} // namespace attune::reference::detail
