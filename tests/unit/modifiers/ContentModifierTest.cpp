//===- ContentModifierTest.cpp - Shaw, Transformer-XL, DeBERTa vs sources -===//
//
// The content modifiers (terms that read q or k rows, compiler/modifiers)
// against literal transcriptions, in this file and in double, of the code
// their formulas come from:
//
//   - Shaw et al.: tensor2tensor's dot_product_attention_relative
//     (_generate_relative_positions_matrix, _relative_attention_inner);
//   - Transformer-XL: RelPartialLearnableMultiHeadAttn.forward with its
//     _rel_shift (kimiyoung/transformer-xl, pytorch/mem_transformer.py);
//   - DeBERTa: Hugging Face DebertaV2's disentangled_attention_bias with
//     build_relative_position / make_log_bucket_position.
//
// Each transcription computes attention outputs for random inputs; the
// modifier's reference semantics (what the evaluator runs: referenceContent,
// addReferenceValue) must give the same, and its kernel rows (kernelRow,
// JIT-compiled at this process's ISA level) the same rows as referenceRow.
//
//===----------------------------------------------------------------------===//

#include "compiler/modifiers/ScoreModifier.h"
#include "tests/unit/modifiers/ModifierTestSupport.h"
#include "compiler/targets/cpu/CpuTarget.h"

#include "Halide.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace attune::modifiers;
using attune::modifiers::testing::get;
using attune::modifiers::testing::kInf;

namespace {

std::vector<double> randomVector(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(n);
  for (double &x : v)
    x = normal(rng);
  return v;
}

/// One head of attention, [S, D] row-major operands.
struct Head {
  int64_t Sq, Sk, D;
  std::vector<double> q, k, v;
};

Head randomHead(int64_t Sq, int64_t Sk, int64_t D, unsigned seed) {
  return {Sq, Sk, D, randomVector(Sq * D, seed), randomVector(Sk * D, seed + 1),
          randomVector(Sk * D, seed + 2)};
}

/// Softmax of each row of `scores` [Sq, Sk] (-inf masks), times v, plus
/// `extra(i, j, p)` for a value term. The transcriptions' common tail.
std::vector<double> softmaxTimesV(const Head &x, std::vector<double> scores) {
  std::vector<double> out(x.Sq * x.D, 0.0);
  for (int64_t i = 0; i < x.Sq; ++i) {
    double m = -kInf, sum = 0;
    for (int64_t j = 0; j < x.Sk; ++j)
      m = std::max(m, scores[i * x.Sk + j]);
    for (int64_t j = 0; j < x.Sk; ++j)
      sum += (scores[i * x.Sk + j] = std::exp(scores[i * x.Sk + j] - m));
    for (int64_t j = 0; j < x.Sk; ++j)
      for (int64_t d = 0; d < x.D; ++d)
        out[i * x.D + d] += scores[i * x.Sk + j] / sum * x.v[j * x.D + d];
  }
  return out;
}

/// Attention of head `h` (of `heads`) with `modifier` as its reference
/// semantics define it: scale (q.k + content) + bias, softmax, p.v + value
/// term; causal when asked, the query block at the end of the keys.
std::vector<double> viaModifier(const ScoreModifier &modifier, ModifierParams params,
                                const std::vector<ReferenceOperand> &operands,
                                const Head &x, int64_t heads, int64_t h, double scale,
                                bool causal) {
  std::vector<std::vector<int64_t>> shapes;
  for (const ReferenceOperand &operand : operands)
    shapes.push_back(operand.shape);
  EXPECT_EQ(checkModifier(modifier, params, {heads, x.Sq, x.Sk, x.D, x.D}, shapes), "");
  const int64_t diag = x.Sk - x.Sq;
  std::vector<double> scores(x.Sq * x.Sk), out(x.Sq * x.D, 0.0);
  for (int64_t i = 0; i < x.Sq; ++i)
    for (int64_t j = 0; j < x.Sk; ++j) {
      const int64_t delta = j - (i + diag);
      double dot = 0;
      for (int64_t d = 0; d < x.D; ++d)
        dot += x.q[i * x.D + d] * x.k[j * x.D + d];
      dot += referenceContent(modifier, params, operands, h, delta, &x.q[i * x.D],
                              &x.k[j * x.D], x.D);
      double s = scale * dot + modifier.referenceBias(params, operands, heads, h, delta);
      scores[i * x.Sk + j] = causal && delta > 0 ? -kInf : s;
    }
  for (int64_t i = 0; i < x.Sq; ++i) {
    double m = -kInf, sum = 0;
    for (int64_t j = 0; j < x.Sk; ++j)
      m = std::max(m, scores[i * x.Sk + j]);
    std::vector<double> p(x.Sk);
    for (int64_t j = 0; j < x.Sk; ++j)
      sum += (p[j] = std::exp(scores[i * x.Sk + j] - m));
    for (int64_t j = 0; j < x.Sk; ++j) {
      for (int64_t d = 0; d < x.D; ++d)
        out[i * x.D + d] += p[j] / sum * x.v[j * x.D + d];
      addReferenceValue(modifier, params, operands, p[j] / sum, j - (i + diag),
                        &out[i * x.D], x.D);
    }
  }
  return out;
}

void expectNear(const std::vector<double> &got, const std::vector<double> &want,
                double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t e = 0; e < got.size(); ++e)
    ASSERT_NEAR(got[e], want[e], tolerance * (1 + std::fabs(want[e]))) << "element " << e;
}

/// kernelRow of term `term`, JIT-compiled, for every delta in [lo, hi].
std::vector<int> kernelRows(const ScoreModifier &modifier, const ModifierParams &params,
                            size_t term, int lo, int hi) {
  Halide::Var x("x");
  Halide::Func rows("rows");
  rows(x) = modifier.kernelRow(params, term, x + lo);
  rows.vectorize(x, 8, Halide::TailStrategy::GuardWithIf);
  Halide::Buffer<int> out = rows.realize({hi - lo + 1}, attune::targets::cpu::jitTarget());
  return std::vector<int>(out.begin(), out.end());
}

void expectKernelRowsMatch(const ScoreModifier &modifier, ModifierParams params,
                           int lo, int hi) {
  std::vector<ContentTerm> terms = modifier.contentTerms(params);
  for (size_t t = 0; t < terms.size(); ++t) {
    if (terms[t].form == ContentTerm::HeadVector)
      continue;
    std::vector<int> rows = kernelRows(modifier, params, t, lo, hi);
    for (int delta = lo; delta <= hi; ++delta)
      ASSERT_EQ(rows[delta - lo], modifier.referenceRow(params, t, delta))
          << "term " << t << " delta " << delta;
    // The saturation hint holds where there is one.
    if (std::optional<int64_t> ds = modifier.saturationDistance(params, t))
      for (int delta = lo; delta <= hi; ++delta) {
        if (delta >= *ds) {
          ASSERT_EQ(modifier.referenceRow(params, t, delta),
                    modifier.referenceRow(params, t, *ds))
              << "term " << t << " delta " << delta;
        }
        if (delta <= -*ds) {
          ASSERT_EQ(modifier.referenceRow(params, t, delta),
                    modifier.referenceRow(params, t, -*ds))
              << "term " << t << " delta " << delta;
        }
      }
  }
}

//===----------------------------------------------------------------------===//
// Shaw et al.
//===----------------------------------------------------------------------===//

// tensor2tensor/layers/common_attention.py:
//
//   def _generate_relative_positions_matrix(length_q, length_k,
//                                           max_relative_position, cache=False):
//     if length_q == length_k:
//       range_vec_q = range_vec_k = tf.range(length_q)
//     else:
//       range_vec_k = tf.range(length_k)
//       range_vec_q = range_vec_k[-length_q:]
//     distance_mat = range_vec_k[None, :] - range_vec_q[:, None]
//     distance_mat_clipped = tf.clip_by_value(distance_mat, -max_relative_position,
//                                             max_relative_position)
//     final_mat = distance_mat_clipped + max_relative_position
//     return final_mat
//
//   def _relative_attention_inner(x, y, z, transpose):
//     xy_matmul = tf.matmul(x, y, transpose_b=transpose)
//     ... x_tz_matmul = tf.matmul(x_t_r, z, transpose_b=transpose) ...
//     return xy_matmul + x_tz_matmul_r_t
//
//   def dot_product_attention_relative(q, k, v, bias, max_relative_position, ...):
//     relations_keys = _generate_relative_positions_embeddings(...)   # table[final_mat]
//     relations_values = _generate_relative_positions_embeddings(...)
//     logits = _relative_attention_inner(q, k, relations_keys, True)
//     weights = tf.nn.softmax(logits)
//     return _relative_attention_inner(weights, v, relations_values, False)
//
// with q already multiplied by depth^-0.5 (multihead_attention).
std::vector<double> shawTensor2Tensor(const Head &x, int64_t K,
                                      const std::vector<double> &keysTable,
                                      const std::vector<double> &valuesTable) {
  const int64_t Sq = x.Sq, Sk = x.Sk, D = x.D;
  std::vector<int64_t> rangeK(Sk), rangeQ(Sq);
  for (int64_t j = 0; j < Sk; ++j)
    rangeK[j] = j;
  for (int64_t i = 0; i < Sq; ++i)
    rangeQ[i] = Sq == Sk ? i : rangeK[Sk - Sq + i];
  std::vector<int64_t> finalMat(Sq * Sk);
  for (int64_t i = 0; i < Sq; ++i)
    for (int64_t j = 0; j < Sk; ++j)
      finalMat[i * Sk + j] = std::clamp(rangeK[j] - rangeQ[i], -K, K) + K;
  std::vector<double> q(x.q);
  for (double &e : q)
    e *= 1.0 / std::sqrt(double(D));
  // logits = q k^T + (q relations_keys^T), per (i, j)
  std::vector<double> logits(Sq * Sk);
  for (int64_t i = 0; i < Sq; ++i)
    for (int64_t j = 0; j < Sk; ++j) {
      double xy = 0, xz = 0;
      for (int64_t d = 0; d < D; ++d) {
        xy += q[i * D + d] * x.k[j * D + d];
        xz += q[i * D + d] * keysTable[finalMat[i * Sk + j] * D + d];
      }
      logits[i * Sk + j] = xy + xz;
    }
  // weights v + weights relations_values
  std::vector<double> weights(logits);
  for (int64_t i = 0; i < Sq; ++i) {
    double m = -kInf, sum = 0;
    for (int64_t j = 0; j < Sk; ++j)
      m = std::max(m, weights[i * Sk + j]);
    for (int64_t j = 0; j < Sk; ++j)
      sum += (weights[i * Sk + j] = std::exp(weights[i * Sk + j] - m));
    for (int64_t j = 0; j < Sk; ++j)
      weights[i * Sk + j] /= sum;
  }
  std::vector<double> out(Sq * D, 0.0);
  for (int64_t i = 0; i < Sq; ++i)
    for (int64_t j = 0; j < Sk; ++j)
      for (int64_t d = 0; d < D; ++d)
        out[i * D + d] += weights[i * Sk + j] *
                          (x.v[j * D + d] + valuesTable[finalMat[i * Sk + j] * D + d]);
  return out;
}

TEST(Shaw, MatchesTensor2Tensor) {
  const ScoreModifier &shaw = get("shaw");
  const int64_t K = 3, D = 8;
  for (auto [Sq, Sk] : {std::pair<int64_t, int64_t>{9, 9}, {4, 11}}) {
    SCOPED_TRACE("Sq " + std::to_string(Sq) + " Sk " + std::to_string(Sk));
    Head x = randomHead(Sq, Sk, D, 11);
    std::vector<double> keys = randomVector((2 * K + 1) * D, 21),
                        values = randomVector((2 * K + 1) * D, 22);
    std::vector<double> want = shawTensor2Tensor(x, K, keys, values);
    std::vector<double> got =
        viaModifier(shaw, {{"max_distance", double(K)}},
                    {{keys.data(), {2 * K + 1, D}}, {values.data(), {2 * K + 1, D}}}, x,
                    1, 0, 1.0 / std::sqrt(double(D)), /*causal=*/false);
    expectNear(got, want, 1e-12);
  }
  expectKernelRowsMatch(shaw, {{"max_distance", double(K)}}, -40, 40);
}

//===----------------------------------------------------------------------===//
// Transformer-XL
//===----------------------------------------------------------------------===//

// kimiyoung/transformer-xl, pytorch/mem_transformer.py,
// RelPartialLearnableMultiHeadAttn.forward (one batch row, one head n):
//
//   rw_head_q = w_head_q + r_w_bias
//   AC = torch.einsum('ibnd,jbnd->ijbn', (rw_head_q, w_head_k))
//   rr_head_q = w_head_q + r_r_bias
//   BD = torch.einsum('ibnd,jnd->ijbn', (rr_head_q, r_head_k))
//   BD = self._rel_shift(BD)
//   attn_score = AC + BD
//   attn_score.mul_(self.scale)
//   attn_score = attn_score.float().masked_fill(attn_mask[:,:,:,None], -float('inf'))
//   attn_prob = F.softmax(attn_score, dim=1)
//   attn_vec = torch.einsum('ijbn,jbnd->ibnd', (attn_prob, w_head_v))
//
//   def _rel_shift(self, x, zero_triu=False):
//       zero_pad = torch.zeros((x.size(0), 1, *x.size()[2:]), ...)
//       x_padded = torch.cat([zero_pad, x], dim=1)
//       x_padded = x_padded.view(x.size(1) + 1, x.size(0), *x.size()[2:])
//       x = x_padded[1:].view_as(x)
//       return x
//
// with r the encoding of pos_seq = arange(klen-1, -1, -1.0) through r_net
// (r_head_k [rlen = klen, D] here, given), and
// dec_attn_mask = triu(ones(qlen, klen), diagonal=1+mlen), mlen = klen - qlen.
std::vector<double> transformerXL(const Head &x, const std::vector<double> &u,
                                  const std::vector<double> &v,
                                  const std::vector<double> &rHeadK, double scale) {
  const int64_t qlen = x.Sq, klen = x.Sk, rlen = klen, D = x.D, mlen = klen - qlen;
  std::vector<double> AC(qlen * klen), BD(qlen * rlen);
  for (int64_t i = 0; i < qlen; ++i) {
    for (int64_t j = 0; j < klen; ++j) {
      double s = 0;
      for (int64_t d = 0; d < D; ++d)
        s += (x.q[i * D + d] + u[d]) * x.k[j * D + d];
      AC[i * klen + j] = s;
    }
    for (int64_t j = 0; j < rlen; ++j) {
      double s = 0;
      for (int64_t d = 0; d < D; ++d)
        s += (x.q[i * D + d] + v[d]) * rHeadK[j * D + d];
      BD[i * rlen + j] = s;
    }
  }
  // _rel_shift: pad a zero column in front, view as [rlen + 1, qlen], drop
  // the first row, view as [qlen, rlen] again.
  std::vector<double> padded(qlen * (rlen + 1));
  for (int64_t i = 0; i < qlen; ++i) {
    padded[i * (rlen + 1)] = 0;
    for (int64_t j = 0; j < rlen; ++j)
      padded[i * (rlen + 1) + 1 + j] = BD[i * rlen + j];
  }
  std::vector<double> shifted(padded.begin() + qlen, padded.end());
  std::vector<double> scores(qlen * klen);
  for (int64_t i = 0; i < qlen; ++i)
    for (int64_t j = 0; j < klen; ++j) {
      bool masked = j >= i + 1 + mlen;
      scores[i * klen + j] =
          masked ? -kInf : scale * (AC[i * klen + j] + shifted[i * rlen + j]);
    }
  return softmaxTimesV(x, scores);
}

TEST(TransformerXL, MatchesItsRelShift) {
  const ScoreModifier &xl = get("xl");
  const int64_t D = 8, H = 2;
  for (auto [qlen, klen] : {std::pair<int64_t, int64_t>{7, 7}, {5, 12}}) {
    SCOPED_TRACE("qlen " + std::to_string(qlen) + " klen " + std::to_string(klen));
    // Head 1 of 2: the tables hold both heads, the transcription one.
    const int64_t h = 1;
    std::vector<double> u = randomVector(H * D, 31), v = randomVector(H * D, 32),
                        r = randomVector(klen * H * D, 33);
    std::vector<double> uHead(u.begin() + h * D, u.begin() + (h + 1) * D),
        vHead(v.begin() + h * D, v.begin() + (h + 1) * D), rHead(klen * D);
    for (int64_t t = 0; t < klen; ++t)
      for (int64_t d = 0; d < D; ++d)
        rHead[t * D + d] = r[(t * H + h) * D + d];
    Head x = randomHead(qlen, klen, D, 41);
    const double scale = 1.0 / std::sqrt(double(D));
    std::vector<double> want = transformerXL(x, uHead, vHead, rHead, scale);
    std::vector<double> got =
        viaModifier(xl, {{"max_distance", double(klen - 1)}},
                    {{u.data(), {H, D}}, {v.data(), {H, D}}, {r.data(), {klen, H, D}}}, x,
                    H, h, scale, /*causal=*/true);
    expectNear(got, want, 1e-12);
  }
  expectKernelRowsMatch(xl, {{"max_distance", 99.0}}, -99, 5);
}

//===----------------------------------------------------------------------===//
// DeBERTa
//===----------------------------------------------------------------------===//

// transformers/models/deberta_v2/modeling_deberta_v2.py:
//
//   def make_log_bucket_position(relative_pos, bucket_size, max_position):
//       sign = torch.sign(relative_pos)
//       mid = bucket_size // 2
//       abs_pos = torch.where((relative_pos < mid) & (relative_pos > -mid),
//                             torch.tensor(mid - 1).type_as(relative_pos),
//                             torch.abs(relative_pos))
//       log_pos = torch.ceil(torch.log(abs_pos / mid)
//                 / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)) + mid
//       bucket_pos = torch.where(abs_pos <= mid, relative_pos.type_as(log_pos), log_pos * sign)
//       return bucket_pos
//
//   def build_relative_position(query_layer, key_layer, bucket_size=-1, max_position=-1):
//       q_ids = torch.arange(0, query_size); k_ids = torch.arange(0, key_size)
//       rel_pos_ids = q_ids[:, None] - k_ids[None, :]
//       if bucket_size > 0 and max_position > 0:
//           rel_pos_ids = make_log_bucket_position(rel_pos_ids, bucket_size, max_position)
//       ...
//
//   disentangled_attention_bias (self-attention, query size == key size):
//       att_span = self.pos_ebd_size
//       scale = torch.sqrt(torch.tensor(pos_key_layer.size(-1), dtype=torch.float) * scale_factor)
//       c2p_att = torch.bmm(query_layer, pos_key_layer.transpose(-1, -2))
//       c2p_pos = torch.clamp(relative_pos + att_span, 0, att_span * 2 - 1)
//       c2p_att = torch.gather(c2p_att, dim=-1, index=c2p_pos...)
//       score += c2p_att / scale
//       r_pos = relative_pos
//       p2c_pos = torch.clamp(-r_pos + att_span, 0, att_span * 2 - 1)
//       p2c_att = torch.bmm(key_layer, pos_query_layer.transpose(-1, -2))
//       p2c_att = torch.gather(p2c_att, dim=-1, index=p2c_pos...).transpose(-1, -2)
//       score += p2c_att / scale
//
// and attention_scores = q k^T / scale + score, scale_factor = 3. The
// bucketing runs in float32 (abs_pos / mid is a float32 tensor).
int64_t makeLogBucketPosition(int64_t relativePos, int64_t bucketSize, int64_t maxPosition) {
  const double sign = relativePos > 0 ? 1 : relativePos < 0 ? -1 : 0;
  const int64_t mid = bucketSize / 2;
  const int64_t absPos =
      (relativePos < mid && relativePos > -mid) ? mid - 1 : std::llabs(relativePos);
  const float logPos =
      std::ceil(std::log(static_cast<float>(absPos) / static_cast<float>(mid)) /
                std::log(static_cast<float>(double(maxPosition - 1) / double(mid))) *
                static_cast<float>(mid - 1)) +
      static_cast<float>(mid);
  return absPos <= mid ? relativePos : static_cast<int64_t>(logPos * sign);
}

std::vector<double> debertaV2(const Head &x, const std::vector<double> &posKey,
                              const std::vector<double> &posQuery, int64_t attSpan,
                              int64_t maxPosition) {
  const int64_t S = x.Sq, D = x.D, R = 2 * attSpan;
  const double scale = std::sqrt(double(D) * 3);
  // relative_pos[a, b] = a - b (bucketed); its rows are queries for c2p and,
  // through the gather below, keys for p2c.
  std::vector<int64_t> relativePos(S * S);
  for (int64_t a = 0; a < S; ++a)
    for (int64_t b = 0; b < S; ++b)
      relativePos[a * S + b] = maxPosition > 0
                                   ? makeLogBucketPosition(a - b, attSpan, maxPosition)
                                   : a - b;
  // c2p_att = query_layer pos_key_layer^T: [S, 2 span]; gathered by c2p_pos.
  std::vector<double> c2pAtt(S * R), p2cAtt(S * R);
  for (int64_t a = 0; a < S; ++a)
    for (int64_t r = 0; r < R; ++r) {
      double c = 0, p = 0;
      for (int64_t d = 0; d < D; ++d) {
        c += x.q[a * D + d] * posKey[r * D + d];
        p += x.k[a * D + d] * posQuery[r * D + d];
      }
      c2pAtt[a * R + r] = c;
      p2cAtt[a * R + r] = p;
    }
  std::vector<double> scores(S * S);
  for (int64_t i = 0; i < S; ++i)
    for (int64_t j = 0; j < S; ++j) {
      double qk = 0;
      for (int64_t d = 0; d < D; ++d)
        qk += x.q[i * D + d] * x.k[j * D + d];
      int64_t c2pPos = std::clamp<int64_t>(relativePos[i * S + j] + attSpan, 0, R - 1);
      double c2p = c2pAtt[i * R + c2pPos];
      // gather(p2c_att, -1, p2c_pos)[x, y] = p2c_att[x, p2c_pos[x, y]], then
      // transposed: score[y, x] takes it, x = j the key row of p2c_att.
      int64_t p2cPos = std::clamp<int64_t>(-relativePos[j * S + i] + attSpan, 0, R - 1);
      double p2c = p2cAtt[j * R + p2cPos];
      scores[i * S + j] = qk / scale + c2p / scale + p2c / scale;
    }
  return softmaxTimesV(x, scores);
}

TEST(Deberta, MatchesHuggingFaceDebertaV2) {
  const ScoreModifier &deberta = get("deberta");
  const int64_t D = 8, H = 1;
  // v1-style clipping (span 4) and v2 log buckets (span 8 up to 24).
  for (auto [span, maxPosition] : {std::pair<int64_t, int64_t>{4, 0}, {8, 24}}) {
    SCOPED_TRACE("span " + std::to_string(span) + " max_position " +
                 std::to_string(maxPosition));
    const int64_t S = 40;
    Head x = randomHead(S, S, D, 51);
    std::vector<double> posKey = randomVector(2 * span * H * D, 61),
                        posQuery = randomVector(2 * span * H * D, 62);
    std::vector<double> want = debertaV2(x, posKey, posQuery, span, maxPosition);
    std::vector<double> got = viaModifier(
        deberta, {{"span", double(span)}, {"max_position", double(maxPosition)}},
        {{posKey.data(), {2 * span, H, D}}, {posQuery.data(), {2 * span, H, D}}}, x, H, 0,
        1.0 / std::sqrt(3.0 * D), /*causal=*/false);
    expectNear(got, want, 1e-12);
  }
  // DeBERTa-v3-base's buckets (256 up to 512) at every distance a 4096-token
  // input has, in the kernel as in the reference.
  expectKernelRowsMatch(deberta, {{"span", 256.0}, {"max_position", 512.0}}, -4096, 4096);
  expectKernelRowsMatch(deberta, {{"span", 16.0}, {"max_position", 0.0}}, -100, 100);
}

TEST(ContentModifiers, TableShapesAreChecked) {
  ModifierParams shaw = {{"max_distance", 2.0}};
  EXPECT_EQ(checkModifier(get("shaw"), shaw, {4, -1, -1, 16, 8}, {{5, 16}, {5, 16}}),
            "modifier 'shaw': expected operand 'value_table' [2 max_distance + 1, Dv] to "
            "have 8 columns, the value head dim (dim 1), got 16");
  ModifierParams xl = {{"max_distance", 9.0}};
  EXPECT_EQ(checkModifier(get("xl"), xl, {4, -1, 10, 16, 16}, {{4, 16}, {4, 8}, {10, 4, 16}}),
            "modifier 'xl': expected operand 'v' [H, D] to have 16 columns, the head dim "
            "(dim 1), got 8");
  ModifierParams deberta = {{"span", 4.0}};
  EXPECT_EQ(checkModifier(get("deberta"), deberta, {4, -1, -1, 16, 16},
                          {{8, 4, 16}, {6, 4, 16}}),
            "modifier 'deberta': expected operand 'query_pos' [2 span, H, D] to have 8 rows, "
            "got 6");
}

} // namespace
