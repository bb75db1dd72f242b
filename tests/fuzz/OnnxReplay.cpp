//===- OnnxReplay.cpp - the ONNX target without libFuzzer -----------------===//
//
// Replay.h's driver with mutants of ONNX models. Byte flips of a protobuf
// mostly fail to parse or only change a weight, and the importer's
// interesting part starts after the parse, so four mutants in five are
// edited as models instead: the seed is parsed into onnx::ModelProto, one to
// three structural edits are applied, and the model is serialised again; a
// tenth of those then get a byte mutation too. The edits:
//  - a node's op type set to another the importer supports, one it accepts
//    only inside a pattern, or one it does not know (opset 23's Attention,
//    RotaryEmbedding, RMSNormalization, Trilu, Expand, control flow), or its
//    domain changed;
//  - nodes dropped, duplicated (outputs defined twice), swapped, or copied
//    in from another seed;
//  - a node's input or output renamed: to its own output (a cycle), to a
//    later node's output (a longer cycle), to a name nothing defines, to the
//    empty name, to a graph input, an initializer or another node's output;
//    inputs and outputs added or removed;
//  - attributes the importer reads set to edge values (negative axes, 0,
//    2^31, 2^62, INT64_MIN and INT64_MAX, NaN and infinities, empty and
//    repeated lists, other strings), given the wrong type, or added;
//  - a tensor (initializer, Constant value, ConstantOfShape value) given new
//    dims (0, -1, 2^31, 2^62, 2^40, rank 0 or 9, two swapped so that the
//    data still fits), any data type (UNDEFINED,
//    STRING, the float8 and int4 kinds, unknown numbers), raw_data cut,
//    grown or dropped, its values moved to the typed fields with the wrong
//    count, single values set to edges or copied onto another (shape
//    constants, axes, the scalars the patterns look for), or its data made
//    external: locations inside and outside the folder (../../etc/passwd,
//    /etc/passwd, a folder, a missing file, the model itself), offsets and
//    lengths past the end of weights.bin or not numbers;
//  - the default opset set to 0, 1, 16, 17, 18, 20, 23, 24, 1000, or
//    imported twice or not at all;
//  - graph inputs without a shape or a type, with other element types, dims
//    (negative, 0, huge, symbolic, rank 9), removed, duplicated or renamed;
//    graph outputs renamed, removed, or naming an input or an initializer;
//    initializers duplicated, removed or renamed onto a node's output;
//  - the graph's name made odd (digits, punctuation, empty).
// The fifth mutant gets one to four of Replay's byte mutations of the seed
// instead (the invalid seeds that do not parse get only those).
//
// Usage: onnx_fuzz_replay [--mutations=N] [--seed=S] PATH...
//
//===----------------------------------------------------------------------===//

#include "tests/fuzz/Replay.h"

#include "onnx/onnx.pb.h"

#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using attune::fuzz::Random;

namespace attune::fuzz {
extern bool lastOnnxImported; // OnnxFuzzer.cpp
} // namespace attune::fuzz

namespace {

template <typename T, size_t N> const T &pick(Random &rng, const T (&items)[N]) {
  return items[rng.below(N)];
}

/// Op types: what the importer converts, what it takes only inside a
/// recognised function, and what it does not know.
const char *const kOpTypes[] = {
    "Identity", "Constant", "Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less",
    "LessOrEqual", "Greater", "GreaterOrEqual", "Max", "Min", "And", "Or", "Xor",
    "Not", "MatMul", "Gemm", "Reshape", "Unsqueeze", "Squeeze", "Flatten",
    "Transpose", "Gather", "Range", "Concat", "Split", "Slice", "ReduceSum",
    "Shape", "Cast", "Where", "ConstantOfShape", "Softmax",
    "LayerNormalization", "Neg", "Abs", "Log", "Cos", "Sin", "Relu", "Gelu",
    // Only inside GELU, SiLU, RMSNorm, L2 normalisation.
    "Erf", "Tanh", "Sigmoid", "Sqrt", "Reciprocal", "ReduceMean", "ReduceL2",
    // Not supported.
    "Attention", "RotaryEmbedding", "RMSNormalization", "Trilu", "Expand",
    "HardSwish", "If", "Loop", "Scan", "Einsum", "", "add", "MatMulInteger"};

/// Attribute names the importer reads.
const char *const kAttrNames[] = {
    "axis", "axes", "perm", "keepdims", "allowzero", "to", "alpha", "beta",
    "transA", "transB", "epsilon", "split", "start", "end", "approximate",
    "value", "value_float", "value_int", "value_floats", "value_ints"};

const int64_t kInts[] = {0,
                         1,
                         -1,
                         2,
                         -2,
                         3,
                         4,
                         5,
                         7,
                         8,
                         9,
                         -9,
                         16,
                         (int64_t(1) << 31) - 1,
                         int64_t(1) << 31,
                         -(int64_t(1) << 31),
                         int64_t(1) << 32,
                         int64_t(1) << 40,
                         int64_t(1) << 62,
                         -(int64_t(1) << 62),
                         std::numeric_limits<int64_t>::max(),
                         std::numeric_limits<int64_t>::min(),
                         std::numeric_limits<int64_t>::max() - 1,
                         std::numeric_limits<int64_t>::min() + 1};

int64_t edgeInt(Random &rng) {
  return rng.oneIn(4) ? int64_t(rng.below(12)) - 3 : pick(rng, kInts);
}

float edgeFloat(Random &rng) {
  static const float kFloats[] = {0.0f,
                                  -0.0f,
                                  1.0f,
                                  -1.0f,
                                  0.5f,
                                  2.0f,
                                  3.0f,
                                  1.41421356f,
                                  0.70710678f,
                                  0.044715f,
                                  0.7978845608f,
                                  1e-12f,
                                  1e-5f,
                                  1e38f,
                                  -3.4028235e38f,
                                  1e-45f,
                                  std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::quiet_NaN(),
                                  9.2233720e18f,
                                  65536.5f};
  return pick(rng, kFloats);
}

/// Data types: every TensorProto.DataType and a few numbers past them.
int edgeDataType(Random &rng) {
  if (rng.oneIn(8)) {
    static const int kOdd[] = {-1, 29, 100, 1 << 30};
    return pick(rng, kOdd);
  }
  return int(rng.below(29));
}

/// The names a graph's values go by, for renames that hit something.
std::vector<std::string> valueNames(const onnx::GraphProto &g) {
  std::vector<std::string> names;
  for (const auto &in : g.input())
    names.push_back(in.name());
  for (const auto &t : g.initializer())
    names.push_back(t.name());
  for (const auto &n : g.node())
    for (const auto &o : n.output())
      names.push_back(o);
  return names;
}

std::string someName(Random &rng, const onnx::GraphProto &g) {
  static const char *const kNames[] = {"", "missing", "x", "y",
                                       "input_ids", "attention_mask", "w",
                                       "model.onnx"};
  std::vector<std::string> names = valueNames(g);
  if (names.empty() || rng.oneIn(5))
    return pick(rng, kNames);
  return names[rng.below(names.size())];
}

/// Every tensor in the graph's reach: initializers and node attributes.
std::vector<onnx::TensorProto *> tensors(onnx::GraphProto &g) {
  std::vector<onnx::TensorProto *> out;
  for (auto &t : *g.mutable_initializer())
    out.push_back(&t);
  for (auto &n : *g.mutable_node())
    for (auto &a : *n.mutable_attribute())
      if (a.has_t())
        out.push_back(a.mutable_t());
  return out;
}

/// Sets `t`'s data to external data with awkward keys.
void makeExternal(onnx::TensorProto &t, Random &rng) {
  static const char *const kLocations[] = {
      "weights.bin", "weights.bin", "sub/weights.bin", "./weights.bin",
      "../../etc/passwd", "/etc/passwd", "sub/../weights.bin", "sub", ".",
      "", "missing.bin", "model.onnx", "imported.safetensors",
      "weights.bin/x", "sub//weights.bin"};
  static const char *const kNumbers[] = {
      "0", "4", "63", "64", "192", "255", "256", "257", "-1", "", "x",
      "18446744073709551615", "18446744073709551616", "9223372036854775807",
      "4294967296", "1e3", " 4", "0x10"};
  t.clear_raw_data();
  t.clear_float_data();
  t.clear_int64_data();
  t.clear_int32_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  t.clear_external_data();
  for (const char *key : {"location", "offset", "length"}) {
    if (rng.oneIn(5) && std::string(key) != "location")
      continue;
    if (rng.oneIn(12))
      continue; // even the location
    onnx::StringStringEntryProto *e = t.add_external_data();
    e->set_key(key);
    if (std::string(key) == "location") {
      if (rng.oneIn(10))
        e->set_value(std::string(300, 'a'));
      else
        e->set_value(pick(rng, kLocations));
    } else {
      e->set_value(pick(rng, kNumbers));
    }
  }
  if (rng.oneIn(6)) { // a key twice, or one it does not know
    onnx::StringStringEntryProto *e = t.add_external_data();
    e->set_key(rng.oneIn(2) ? "offset" : "checksum");
    e->set_value(pick(rng, kNumbers));
  }
}

void mutateTensor(onnx::TensorProto &t, Random &rng,
                  const std::vector<std::string> &seedBytes) {
  switch (rng.below(8)) {
  case 0: { // dims
    if (t.dims_size() > 1 && rng.oneIn(3)) {
      // Two dims swapped: the data still fits, the shapes downstream do not.
      t.mutable_dims()->SwapElements(int(rng.below(t.dims_size())),
                                     int(rng.below(t.dims_size())));
    } else if (rng.oneIn(4)) {
      t.clear_dims();
      size_t rank = rng.oneIn(3) ? 9 : rng.below(5);
      for (size_t k = 0; k < rank; ++k)
        t.add_dims(rng.oneIn(2) ? int64_t(1 + rng.below(4)) : edgeInt(rng));
    } else if (t.dims_size() && !rng.oneIn(4)) {
      t.set_dims(int(rng.below(t.dims_size())), edgeInt(rng));
    } else {
      t.add_dims(edgeInt(rng));
    }
    break;
  }
  case 1: // data type
    t.set_data_type(edgeDataType(rng));
    break;
  case 2: { // raw_data cut, grown or dropped
    std::string raw = t.raw_data();
    switch (rng.below(4)) {
    case 0:
      raw.resize(rng.below(raw.size() + 1));
      break;
    case 1:
      raw.append(1 + rng.below(16), '\x7f');
      break;
    case 2:
      t.clear_raw_data();
      return;
    default: { // the raw bytes of another seed: inconsistent with everything
      const std::string &other = seedBytes[rng.below(seedBytes.size())];
      size_t from = rng.below(other.size() + 1);
      raw = other.substr(from, rng.below(65));
      break;
    }
    }
    t.set_raw_data(raw);
    break;
  }
  case 3: { // values in the typed fields, as many as the shape wants or not
    t.clear_raw_data();
    size_t count = rng.below(6);
    switch (rng.below(3)) {
    case 0:
      t.clear_float_data();
      for (size_t k = 0; k < count; ++k)
        t.add_float_data(edgeFloat(rng));
      break;
    case 1:
      t.clear_int64_data();
      for (size_t k = 0; k < count; ++k)
        t.add_int64_data(edgeInt(rng));
      break;
    default:
      t.clear_int32_data();
      for (size_t k = 0; k < count; ++k)
        t.add_int32_data(int32_t(edgeInt(rng)));
      break;
    }
    break;
  }
  case 4:
  case 5: { // one value set to an edge: shape constants, axes, pattern scalars
    std::string raw = t.raw_data();
    if (t.data_type() == onnx::TensorProto::INT64 && raw.size() >= 16 &&
        rng.oneIn(3)) { // one element copied onto another: repeated axes
      size_t count = raw.size() / 8;
      raw.replace(8 * rng.below(count), 8, raw, 8 * rng.below(count), 8);
      t.set_raw_data(raw);
    } else if (!raw.empty()) {
      if (t.data_type() == onnx::TensorProto::INT64 && raw.size() >= 8) {
        int64_t v = edgeInt(rng);
        std::memcpy(&raw[8 * rng.below(raw.size() / 8)], &v, 8);
      } else if (t.data_type() == onnx::TensorProto::FLOAT && raw.size() >= 4) {
        float v = edgeFloat(rng);
        std::memcpy(&raw[4 * rng.below(raw.size() / 4)], &v, 4);
      } else {
        raw[rng.below(raw.size())] ^= char(1u << rng.below(8));
      }
      t.set_raw_data(raw);
    } else if (t.int64_data_size()) {
      t.set_int64_data(int(rng.below(t.int64_data_size())), edgeInt(rng));
    } else if (t.float_data_size()) {
      t.set_float_data(int(rng.below(t.float_data_size())), edgeFloat(rng));
    } else if (t.int32_data_size()) {
      t.set_int32_data(int(rng.below(t.int32_data_size())),
                       int32_t(edgeInt(rng)));
    }
    break;
  }
  case 6:
    makeExternal(t, rng);
    break;
  default: // strings, where nothing reads them
    t.set_data_type(onnx::TensorProto::STRING);
    t.add_string_data("abc");
    break;
  }
}

void mutateAttribute(onnx::NodeProto &n, Random &rng) {
  onnx::AttributeProto *a;
  if (n.attribute_size() && !rng.oneIn(3)) {
    a = n.mutable_attribute(int(rng.below(n.attribute_size())));
  } else {
    a = n.add_attribute();
    a->set_name(pick(rng, kAttrNames));
    a->set_type(onnx::AttributeProto::INT);
  }
  switch (rng.below(8)) {
  case 0:
  case 1:
    a->set_i(edgeInt(rng));
    if (rng.oneIn(2))
      a->set_type(onnx::AttributeProto::INT);
    break;
  case 2: { // a list: empty, repeated, out of range
    a->clear_ints();
    size_t count = rng.below(6);
    int64_t first = edgeInt(rng);
    for (size_t k = 0; k < count; ++k)
      a->add_ints(rng.oneIn(3) ? first : int64_t(rng.below(10)) - 5);
    if (rng.oneIn(2))
      a->set_type(onnx::AttributeProto::INTS);
    break;
  }
  case 3:
    a->set_f(edgeFloat(rng));
    if (rng.oneIn(2))
      a->set_type(onnx::AttributeProto::FLOAT);
    break;
  case 4: {
    a->clear_floats();
    for (size_t k = 0, count = rng.below(5); k < count; ++k)
      a->add_floats(edgeFloat(rng));
    break;
  }
  case 5: {
    static const char *const kStrings[] = {"tanh", "none", "", "TANH",
                                           "erf", "x"};
    a->set_s(pick(rng, kStrings));
    if (rng.oneIn(2))
      a->set_type(onnx::AttributeProto::STRING);
    break;
  }
  case 6: { // a tensor value
    onnx::TensorProto *t = a->mutable_t();
    t->set_data_type(rng.oneIn(2) ? onnx::TensorProto::FLOAT
                                  : edgeDataType(rng));
    t->clear_dims();
    for (size_t k = 0, rank = rng.below(3); k < rank; ++k)
      t->add_dims(int64_t(rng.below(3)));
    if (rng.oneIn(2))
      t->add_float_data(edgeFloat(rng));
    else
      t->add_int64_data(edgeInt(rng));
    a->set_type(onnx::AttributeProto::TENSOR);
    break;
  }
  default: { // the wrong type, or a name the op does not read
    if (rng.oneIn(2))
      a->set_type(onnx::AttributeProto::AttributeType(rng.below(15)));
    else
      a->set_name(pick(rng, kAttrNames));
    break;
  }
  }
}

void mutateValueInfo(onnx::ValueInfoProto &v, Random &rng,
                     const onnx::GraphProto &g) {
  switch (rng.below(6)) {
  case 0: // no shape
    v.mutable_type()->mutable_tensor_type()->clear_shape();
    break;
  case 1: // not a tensor
    v.clear_type();
    if (rng.oneIn(2))
      v.mutable_type()->mutable_sequence_type();
    break;
  case 2:
    v.mutable_type()->mutable_tensor_type()->set_elem_type(edgeDataType(rng));
    break;
  case 3: { // dims
    onnx::TensorShapeProto *shape =
        v.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (rng.oneIn(4)) {
      shape->clear_dim();
      size_t rank = rng.oneIn(3) ? 9 : rng.below(6);
      for (size_t k = 0; k < rank; ++k)
        shape->add_dim()->set_dim_value(int64_t(1 + rng.below(3)));
    }
    if (shape->dim_size() == 0)
      shape->add_dim();
    onnx::TensorShapeProto::Dimension *d =
        shape->mutable_dim(int(rng.below(shape->dim_size())));
    switch (rng.below(4)) {
    case 0:
      d->set_dim_value(edgeInt(rng));
      break;
    case 1:
      d->set_dim_param(rng.oneIn(2) ? "batch" : "seq");
      break;
    case 2:
      d->clear_dim_value();
      d->clear_dim_param();
      break;
    default:
      d->set_dim_value(int64_t(rng.below(9)));
      break;
    }
    break;
  }
  default:
    v.set_name(someName(rng, g));
    break;
  }
}

/// One structural edit of `m`.
void editModel(onnx::ModelProto &m, Random &rng,
               const std::vector<onnx::ModelProto> &parsed,
               const std::vector<std::string> &seedBytes) {
  onnx::GraphProto &g = *m.mutable_graph();
  auto *nodes = g.mutable_node();
  int count = nodes->size();
  onnx::NodeProto *n = count ? nodes->Mutable(int(rng.below(count))) : nullptr;
  switch (rng.below(18)) {
  case 0: // op type
    if (n) {
      n->set_op_type(pick(rng, kOpTypes));
      if (rng.oneIn(10))
        n->set_domain(rng.oneIn(2) ? "ai.onnx" : "com.microsoft");
    }
    break;
  case 1: // drop a node
    if (count)
      nodes->DeleteSubrange(int(rng.below(count)), 1);
    break;
  case 2: // duplicate a node, its outputs defined twice or renamed
    if (n) {
      onnx::NodeProto copy = *n;
      if (rng.oneIn(2) && copy.output_size())
        copy.set_output(0, copy.output(0) + "_dup");
      *g.add_node() = copy;
      nodes->SwapElements(count, int(rng.below(count + 1)));
    }
    break;
  case 3: // reorder
    if (count > 1)
      nodes->SwapElements(int(rng.below(count)), int(rng.below(count)));
    break;
  case 4: // a cycle: an input that names the node's own output or a later one
    if (n && n->input_size() && n->output_size()) {
      int k = int(rng.below(n->input_size()));
      if (rng.oneIn(2)) {
        n->set_input(k, n->output(int(rng.below(n->output_size()))));
      } else {
        // An output of a node that (in a sorted graph) consumes this one.
        const onnx::NodeProto &later = nodes->Get(int(rng.below(count)));
        if (later.output_size())
          n->set_input(k, later.output(0));
      }
    }
    break;
  case 5: // rename an input
    if (n) {
      if (n->input_size() && !rng.oneIn(5))
        n->set_input(int(rng.below(n->input_size())), someName(rng, g));
      else if (rng.oneIn(2))
        n->add_input(someName(rng, g));
      else if (n->input_size())
        n->mutable_input()->RemoveLast();
    }
    break;
  case 6: // rename an output
    if (n) {
      if (n->output_size() && !rng.oneIn(4))
        n->set_output(int(rng.below(n->output_size())), someName(rng, g));
      else if (rng.oneIn(2))
        n->add_output(someName(rng, g));
      else
        n->clear_output();
    }
    break;
  case 7:
  case 8: // attributes
    if (n)
      mutateAttribute(*n, rng);
    break;
  case 9:
  case 10: { // a tensor
    std::vector<onnx::TensorProto *> ts = tensors(g);
    if (!ts.empty())
      mutateTensor(*ts[rng.below(ts.size())], rng, seedBytes);
    break;
  }
  case 11: { // opset
    static const int64_t kVersions[] = {0,  1,  16, 17,   18, 20, 21,
                                        22, 23, 24, 1000, -1, INT64_MAX};
    switch (rng.below(4)) {
    case 0:
      m.clear_opset_import();
      break;
    case 1: {
      onnx::OperatorSetIdProto *o = m.add_opset_import();
      o->set_domain(rng.oneIn(2) ? "" : "ai.onnx");
      o->set_version(pick(rng, kVersions));
      break;
    }
    default:
      for (auto &o : *m.mutable_opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx")
          o.set_version(pick(rng, kVersions));
      break;
    }
    break;
  }
  case 12: // graph inputs
    if (g.input_size() && !rng.oneIn(6)) {
      onnx::ValueInfoProto *v = g.mutable_input(int(rng.below(g.input_size())));
      if (rng.oneIn(5))
        *g.add_input() = *v; // twice
      else
        mutateValueInfo(*v, rng, g);
    } else if (g.input_size()) {
      g.mutable_input()->DeleteSubrange(int(rng.below(g.input_size())), 1);
    }
    break;
  case 13: // graph outputs
    switch (rng.below(4)) {
    case 0:
      g.clear_output();
      break;
    case 1:
      g.add_output()->set_name(someName(rng, g));
      break;
    default:
      if (g.output_size())
        g.mutable_output(int(rng.below(g.output_size())))
            ->set_name(someName(rng, g));
      break;
    }
    break;
  case 14: // initializers
    if (g.initializer_size()) {
      int k = int(rng.below(g.initializer_size()));
      switch (rng.below(3)) {
      case 0:
        *g.add_initializer() = g.initializer(k);
        break;
      case 1:
        g.mutable_initializer()->DeleteSubrange(k, 1);
        break;
      default:
        g.mutable_initializer(k)->set_name(someName(rng, g));
        break;
      }
    }
    break;
  case 15: { // a node from another seed, names and all
    const onnx::ModelProto &other = parsed[rng.below(parsed.size())];
    if (other.graph().node_size()) {
      *g.add_node() =
          other.graph().node(int(rng.below(other.graph().node_size())));
      if (rng.oneIn(2) && g.node_size() > 1)
        g.mutable_node()->SwapElements(g.node_size() - 1,
                                       int(rng.below(g.node_size())));
    }
    break;
  }
  case 16: { // the graph's name
    static const char *const kNames[] = {"",        "0abc", "a.b-c", "main",
                                         "\xff\xfe", "@x",   "name with space"};
    g.set_name(pick(rng, kNames));
    break;
  }
  default: // a node's name, which errors quote
    if (n)
      n->set_name(rng.oneIn(2) ? "" : std::string("n\0'\"{}", 6));
    break;
  }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> seeds;
  std::vector<onnx::ModelProto> parsed;   // the seeds that parse
  std::vector<std::optional<size_t>> index; // seed -> parsed
  attune::fuzz::ReplayTarget target;
  target.name = "onnx";
  target.acceptedWhat = "imported";
  target.prepare = [&](const std::vector<std::string> &files) {
    seeds = files;
    for (const std::string &file : files) {
      onnx::ModelProto m;
      if (!file.empty() && m.ParseFromString(file) && m.has_graph()) {
        index.push_back(parsed.size());
        parsed.push_back(std::move(m));
      } else {
        index.push_back(std::nullopt);
      }
    }
  };
  target.mutate = [&](Random &rng) {
    size_t pickSeed = rng.below(seeds.size());
    std::string bytes;
    if (index[pickSeed] && !rng.oneIn(5)) {
      onnx::ModelProto m = parsed[*index[pickSeed]];
      for (size_t i = 0, n = 1 + rng.below(3); i < n; ++i)
        editModel(m, rng, parsed, seeds);
      bytes = m.SerializeAsString();
      if (rng.oneIn(10))
        attune::fuzz::mutateJsonText(bytes, rng, seeds);
    } else {
      bytes = seeds[pickSeed];
      for (size_t i = 0, n = 1 + rng.below(4); i < n; ++i)
        attune::fuzz::mutateJsonText(bytes, rng, seeds);
    }
    return bytes;
  };
  target.accepted = [](const std::string &) {
    return attune::fuzz::lastOnnxImported;
  };
  return attune::fuzz::replayMain(argc, argv, target);
}
