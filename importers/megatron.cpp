#include "importers/megatron.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "importers/megatron_flags.hpp"

namespace paratwin::importers {

using namespace paratwin::workloads;  // the format the importers write  NOLINT(google-build-using-namespace)

namespace {

using megatron::Kind;

// One argument as given: `--flag`, `--flag value ...` or `--flag=value`.
struct Arg {
  std::string flag;
  std::vector<std::string> values;
  std::string text() const {
    std::string out = flag;
    for (const auto& v : values) out += " " + v;
    return out;
  }
};

std::string basename(const std::string& word) {
  const auto slash = word.rfind('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Words of the launcher that carry no setting: the interpreter, its -u / -m, torchrun itself.
bool is_launcher_word(const std::string& word) {
  const std::string base = basename(word);
  if (base == "torchrun" || word == "-m" || word == "-u" || word == "torch.distributed.launch" ||
      word == "torch.distributed.run")
    return true;
  return base.rfind("python", 0) == 0 && base.find_first_not_of("0123456789.", 6) == std::string::npos;
}

// torchrun's (and torch.distributed.launch's) own options; only the world size matters.
struct LauncherFlag {
  const char* name;
  bool boolean;
};
constexpr LauncherFlag kLauncherFlags[] = {
    {"--nproc_per_node", false}, {"--nproc-per-node", false},   {"--nnodes", false},
    {"--node_rank", false},      {"--node-rank", false},        {"--master_addr", false},
    {"--master-addr", false},    {"--master_port", false},      {"--master-port", false},
    {"--rdzv_id", false},        {"--rdzv-id", false},          {"--rdzv_backend", false},
    {"--rdzv-backend", false},   {"--rdzv_endpoint", false},    {"--rdzv-endpoint", false},
    {"--rdzv_conf", false},      {"--rdzv-conf", false},        {"--max_restarts", false},
    {"--max-restarts", false},   {"--monitor_interval", false}, {"--monitor-interval", false},
    {"--start_method", false},   {"--start-method", false},     {"--log_dir", false},
    {"--log-dir", false},        {"--redirects", false},        {"--tee", false},
    {"--role", false},           {"--local_addr", false},       {"--local-addr", false},
    {"--standalone", true},      {"--use_env", true},           {"--use-env", true},
    {"--no_python", true},       {"--no-python", true},         {"--module", true}};

const LauncherFlag* find_launcher_flag(const std::string& name) {
  for (const auto& f : kLauncherFlags)
    if (name == f.name) return &f;
  return nullptr;
}

std::string join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Megatron-LM's entry points of models other than the GPT decoder (pretrain_gpt.py) that paratwin
// lowers, refused by name: their arguments look like a GPT's (--num-layers, --hidden-size, ...).
void check_entry_point(const std::string& word) {
  static constexpr std::pair<const char*, const char*> kOther[] = {
      {"pretrain_bert.py", "BERT, a bidirectional encoder with masked-language-model and binary heads"},
      {"pretrain_t5.py", "T5, an encoder-decoder with cross-attention"},
      {"pretrain_mamba.py", "Mamba, a state-space model"},
      {"pretrain_hybrid.py", "a hybrid of Mamba, attention and MoE layers"},
      {"pretrain_vlm.py", "a vision-language model"},
      {"pretrain_ict.py", "an ICT retriever (two BERT encoders)"},
      {"pretrain_retro.py", "RETRO, a decoder with retrieval cross-attention"},
      {"pretrain_vision_classify.py", "a vision transformer"},
      {"pretrain_vision_dino.py", "a vision transformer"},
      {"pretrain_vision_inpaint.py", "a vision transformer"}};
  const std::string base = basename(word);
  for (const auto& [script, model] : kOther)
    if (base == script)
      throw WorkloadError(word,
                          std::string("trains ") + model +
                              ": paratwin models decoder-only transformers (GPT, Llama, Mixtral: pretrain_gpt.py)");
}

// Splits the words into arguments. A flag's values are the words up to the next `--` word (argparse
// reads nargs='+' lists such as --data-path the same way); the script path (*.py) and the launcher's
// own words before it are skipped.
std::vector<Arg> split_arguments(const std::vector<std::string>& words) {
  std::vector<Arg> args;
  std::vector<std::string> stray;
  bool after_value_word = false;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.rfind("--", 0) == 0 && w.size() > 2) {
      Arg a;
      const auto eq = w.find('=');
      a.flag = w.substr(0, eq);
      if (eq != std::string::npos) a.values.push_back(w.substr(eq + 1));
      args.push_back(a);
      after_value_word = eq == std::string::npos;
      continue;
    }
    if (ends_with(w, ".py")) {
      check_entry_point(w);
      after_value_word = false;  // the script: arguments after it are Megatron-LM's
      continue;
    }
    if (after_value_word && !args.empty()) {
      args.back().values.push_back(w);
      continue;
    }
    if (is_launcher_word(w)) continue;
    stray.push_back(w);
  }
  if (!stray.empty())
    throw WorkloadError("command line", "words that belong to no argument: " + join(stray) +
                                            " (pretrain_gpt.py takes no positional arguments)");
  return args;
}

// The largest value paratwin takes for each integer argument: the workload format's bounds
// (workloads/workload_loader.cpp) for what becomes a workload field, the same bounds for what only
// enters a product (so that no product of two read values leaves int64_t). Megatron-LM's Python
// integers never wrap; ours would, and a product wrapped to 0 then divides by zero.
constexpr int64_t kMaxRanks = int64_t{1} << 22;  // workloads' limit on ranks, of every axis and in all
int64_t largest_value(const std::string& flag) {
  static const std::map<std::string, int64_t, std::less<>> kLargest = {
      {"--num-layers", 1'000'000},
      {"--hidden-size", int64_t{1} << 20},
      {"--num-attention-heads", int64_t{1} << 20},
      {"--kv-channels", int64_t{1} << 20},
      {"--ffn-hidden-size", int64_t{1} << 22},
      {"--moe-ffn-hidden-size", int64_t{1} << 22},
      {"--seq-length", int64_t{1} << 24},
      {"--encoder-seq-length", int64_t{1} << 24},
      {"--max-position-embeddings", int64_t{1} << 30},
      {"--vocab-size", int64_t{1} << 24},
      {"--make-vocab-size-divisible-by", int64_t{1} << 24},
      {"--tensor-model-parallel-size", kMaxRanks},
      {"--model-parallel-size", kMaxRanks},
      {"--pipeline-model-parallel-size", int64_t{1} << 16},
      {"--expert-model-parallel-size", kMaxRanks},
      {"--expert-tensor-parallel-size", kMaxRanks},
      {"--num-experts", int64_t{1} << 20},
      {"--moe-router-topk", int64_t{1} << 20},
      {"--moe-layer-freq", 1'000'000},
      {"--num-layers-per-virtual-pipeline-stage", 1'000'000},
      {"--num-virtual-stages-per-pipeline-rank", int64_t{1} << 12},
      {"--micro-batch-size", int64_t{1} << 30},
      {"--global-batch-size", int64_t{1} << 30},
      {"--recompute-num-layers", 1'000'000},
      {"--activations-checkpoint-num-layers", 1'000'000},
      {"--checkpoint-num-layers", 1'000'000},
      {"--nproc_per_node", int64_t{1} << 16},  // paratwin's --gpus-per-node bound
      {"--nnodes", kMaxRanks},
  };
  const auto it = kLargest.find(flag);
  return it == kLargest.end() ? int64_t{1} << 30 : it->second;
}

int64_t parse_int(const Arg& a, int64_t min) {
  if (a.values.size() != 1) throw WorkloadError(a.flag, "needs one integer value, got \"" + a.text() + "\"");
  const std::string& v = a.values[0];
  const int64_t max = largest_value(a.flag);
  int64_t out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  const bool digits = end == v.data() + v.size();
  if (ec == std::errc::result_out_of_range && digits)
    throw WorkloadError(a.flag,
                        "= " + v + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  if (ec != std::errc() || !digits) throw WorkloadError(a.flag, "= " + v + " is not an integer");
  if (out < min || out > max)
    throw WorkloadError(a.flag,
                        "= " + v + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return out;
}

// a × b, refused with a message naming `flag` (and `what` the product is) should it leave int64_t. The
// bounds above keep every product of the translator inside; this keeps a future one from wrapping.
int64_t product(int64_t a, int64_t b, const std::string& flag, const std::string& what) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    throw WorkloadError(flag, what + " = " + std::to_string(a) + " × " + std::to_string(b) + " is too large");
  return out;
}

double parse_number(const Arg& a, double min, double max) {
  if (a.values.size() != 1) throw WorkloadError(a.flag, "needs one number, got \"" + a.text() + "\"");
  const std::string& v = a.values[0];
  size_t used = 0;
  double out = 0;
  try {
    out = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size() || !std::isfinite(out)) throw WorkloadError(a.flag, "= " + v + " is not a number");
  if (out < min || out > max) {
    std::ostringstream range;
    range << "= " << v << " is outside " << min << " … " << max;
    throw WorkloadError(a.flag, range.str());
  }
  return out;
}

std::string parse_word(const Arg& a) {
  if (a.values.size() != 1) throw WorkloadError(a.flag, "needs one value, got \"" + a.text() + "\"");
  return a.values[0];
}

// The arguments sorted into what the translator reads and what it only lists.
struct Sorted {
  std::map<std::string, Arg> modelled;  // by flag; argparse keeps the last of a repeated flag
  std::map<std::string, Arg> launcher;
  std::vector<std::string> not_modelled, unknown, inexpressible;
  std::vector<std::string> empty_values;  // not-modelled flags given no value
};

Sorted sort_arguments(const std::vector<Arg>& args) {
  Sorted s;
  for (const Arg& a : args) {
    if (const auto* l = find_launcher_flag(a.flag)) {
      if (l->boolean && !a.values.empty()) throw WorkloadError(a.flag, "takes no value, got \"" + a.text() + "\"");
      if (a.flag == "--nproc_per_node" || a.flag == "--nproc-per-node" || a.flag == "--nnodes")
        s.launcher[a.flag == "--nnodes" ? "--nnodes" : "--nproc_per_node"] = a;
      else
        s.not_modelled.push_back(a.text());
      continue;
    }
    const megatron::Flag* f = megatron::find_flag(a.flag);
    if (!f) {
      (megatron::not_modelled_by_prefix(a.flag) ? s.not_modelled : s.unknown).push_back(a.text());
      continue;
    }
    if (f->boolean && !a.values.empty()) throw WorkloadError(a.flag, "takes no value, got \"" + a.text() + "\"");
    if (!f->boolean && a.values.empty()) {
      // A launch script's empty variable (`--data-path $DATA_PATH` run without the script's
      // arguments): harmless where the value does not enter the cost model.
      if (f->kind != Kind::not_modelled) throw WorkloadError(a.flag, "needs a value");
      s.empty_values.push_back(a.flag);
      s.not_modelled.push_back(a.flag);
      continue;
    }
    switch (f->kind) {
      case Kind::modelled:
        s.modelled[a.flag] = a;
        break;
      case Kind::not_modelled:
        s.not_modelled.push_back(a.text());
        break;
      case Kind::unsupported:
        s.inexpressible.push_back(a.text() + " (" + std::string(f->why) + ")");
        break;
      case Kind::conditional:
        if (a.values.size() == 1 && a.values[0] == f->neutral)
          s.not_modelled.push_back(a.text());
        else
          s.inexpressible.push_back(a.text() + " (" + std::string(f->why) + ")");
        break;
    }
  }
  return s;
}

// Reads the modelled arguments; records which were read so that the description can quote them.
class Reader {
 public:
  explicit Reader(const Sorted& s) : s_(s) {}
  const Arg* find(const std::string& flag) const {
    const auto it = s_.modelled.find(flag);
    return it == s_.modelled.end() ? nullptr : &it->second;
  }
  bool has(const std::string& flag) const { return find(flag) != nullptr; }
  int64_t integer(const std::string& flag, int64_t fallback, int64_t min = 1) const {
    const Arg* a = find(flag);
    return a ? parse_int(*a, min) : fallback;
  }
  int64_t required(const std::string& flag) const {
    const Arg* a = find(flag);
    if (!a) throw WorkloadError(flag, "is required (Megatron-LM needs it too)");
    return parse_int(*a, 1);
  }
  std::string word(const std::string& flag, const std::string& fallback) const {
    const Arg* a = find(flag);
    return a ? parse_word(*a) : fallback;
  }
  double number(const std::string& flag, double fallback, double min, double max) const {
    const Arg* a = find(flag);
    return a ? parse_number(*a, min, max) : fallback;
  }

 private:
  const Sorted& s_;
};

std::string n(int64_t v) {
  return std::to_string(v);
}

struct WorldSize {
  int64_t ranks = 0;
  int64_t per_node = 0;  // from the launcher or --gpus-per-node; 0: unknown
  std::string source;
};

WorldSize world_size(const Sorted& s, const MegatronImportOptions& o) {
  WorldSize w;
  const auto launcher = [&](const char* flag) -> const Arg* {
    const auto it = s.launcher.find(flag);
    return it == s.launcher.end() ? nullptr : &it->second;
  };
  const Arg* nproc = launcher("--nproc_per_node");
  const Arg* nnodes = launcher("--nnodes");
  w.per_node = nproc ? parse_int(*nproc, 1) : o.gpus_per_node;
  if (nnodes && nnodes->values.size() == 1 && nnodes->values[0].find(':') != std::string::npos)
    throw WorkloadError(nnodes->flag, "= " + nnodes->values[0] +
                                          " is an elastic range: give the node count, or paratwin's --world-size");
  const int64_t nodes = nnodes ? parse_int(*nnodes, 1) : 1;
  if (o.world_size > 0) {
    w.ranks = o.world_size;
    w.source = "--world-size " + n(o.world_size);
  } else if (w.per_node > 0) {
    w.source = (nproc ? nproc->text() : "--gpus-per-node " + n(o.gpus_per_node)) + " × " +
               (nnodes ? nnodes->text() : "1 node");
    const std::string flag = nnodes ? nnodes->flag : nproc ? nproc->flag : "--gpus-per-node";
    w.ranks = product(w.per_node, nodes, flag, "the world size " + w.source);
    if (w.ranks > kMaxRanks)
      throw WorkloadError(flag, "makes the world size " + n(w.ranks) + " (" + w.source + "), more than " +
                                    n(kMaxRanks) + " ranks (paratwin's limit)");
  } else {
    throw WorkloadError("world size",
                        "is unknown: give torchrun's --nproc_per_node (and --nnodes) in the command, or paratwin's "
                        "--world-size N or --gpus-per-node G");
  }
  return w;
}

// The value of a not-modelled argument as given ("" if absent or given no value).
std::string listed_value(const Sorted& s, const std::string& flag) {
  for (const auto& a : s.not_modelled)
    if (a.rfind(flag + " ", 0) == 0) return a.substr(flag.size() + 1);
  return "";
}

bool contains_lowercase(std::string text, const std::string& part) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text.find(part) != std::string::npos;
}

// What the tokenizer's vocabulary holds before Megatron-LM pads it
// (megatron/core/tokenizers/utils/build_tokenizer.py and text/libraries/, Megatron-LM main 2026-11).
int64_t tokenizer_vocab(const Reader& r, const Sorted& s, const MegatronImportOptions& o,
                        std::vector<std::string>& assumed) {
  if (o.tokenizer_vocab_size > 0) return o.tokenizer_vocab_size;
  std::string type = r.word("--tokenizer-type", "");
  if (type.empty()) {
    const bool bpe_files = std::any_of(s.not_modelled.begin(), s.not_modelled.end(),
                                       [](const std::string& a) { return a.rfind("--merge-file", 0) == 0; });
    if (bpe_files) {
      type = "GPT2BPETokenizer";
      assumed.push_back("tokenizer GPT2BPETokenizer (no --tokenizer-type; --merge-file names BPE merges)");
    }
  }
  if (type == "GPT2BPETokenizer") return 50257;
  if (type == "NullTokenizer") {
    // NullTokenizer(vocab_size): the end-of-document token is the last of the --vocab-size ids
    // (null_tokenizer.py); the legacy _NullTokenizer removed in 2026-02 added one more.
    if (!r.has("--vocab-size")) throw WorkloadError("--tokenizer-type", "NullTokenizer needs --vocab-size");
    return r.integer("--vocab-size", 0);
  }
  if (type == "TikTokenizer") {
    // TikTokenizer(vocab_size=args.vocab_size or DEFAULT_TIKTOKEN_MAX_VOCAB = 2**17), special tokens
    // included (tiktoken_tokenizer.py l.24, 86).
    if (!r.has("--vocab-size")) assumed.push_back("TikTokenizer of its default 131072 tokens (no --vocab-size)");
    return r.integer("--vocab-size", 131072);
  }
  if (r.has("--vocab-size")) {
    assumed.push_back("vocabulary of --vocab-size before padding" +
                      (type.empty() ? std::string() : " (tokenizer " + type + ")"));
    return r.integer("--vocab-size", 0);
  }
  // A tokenizer read from a file: its size is the file's. The released models' files are known.
  if (type == "Llama2Tokenizer") {
    assumed.push_back("Llama2Tokenizer of 32000 pieces (the tokenizer.model of Llama 2 and Mixtral 8x7B)");
    return 32000;
  }
  if (type == "HuggingFaceTokenizer") {
    const std::string model = listed_value(s, "--tokenizer-model");
    struct Known {
      const char* part;
      int64_t size;
    };
    // Each model card's config.json vocab_size.
    static constexpr Known kKnown[] = {{"llama-3", 128256},     {"llama3", 128256},      {"llama-2", 32000},
                                       {"llama2", 32000},       {"mixtral-8x7b", 32000}, {"gpt2", 50257},
                                       {"deepseek-v3", 129280}, {"deepseek-v2", 102400}};
    for (const auto& k : kKnown)
      if (contains_lowercase(model, k.part)) {
        assumed.push_back("HuggingFaceTokenizer " + model + " of " + n(k.size) + " tokens (the model's config.json)");
        return k.size;
      }
  }
  throw WorkloadError(type.empty() ? "--tokenizer-type" : "--tokenizer-type " + type,
                      "the vocabulary size is unknown to paratwin: give --vocab-size in the command or paratwin's "
                      "--tokenizer-vocab-size N (the tokenizer's size before Megatron-LM pads it)");
}

// `recompute_layers`: --recompute-method block's count when it leaves some of a chunk's layers out
// (training.recompute_num_layers), else 0.
Checkpointing checkpointing(const Reader& r, int64_t layers_per_chunk, std::vector<std::string>& assumed,
                            int64_t& recompute_layers) {
  recompute_layers = 0;
  // Megatron-LM 2021 spelt full recomputation --checkpoint-activations, later
  // --activations-checkpoint-method, since 2022 --recompute-granularity.
  std::string granularity = r.word("--recompute-granularity", "");
  if (granularity.empty() && r.has("--recompute-activations")) granularity = "selective";
  std::string method = r.word("--recompute-method", "");
  int64_t count = r.integer("--recompute-num-layers", 1, 0);
  if (granularity.empty() && (r.has("--checkpoint-activations") || r.has("--activations-checkpoint-method"))) {
    granularity = "full";
    method = r.word("--activations-checkpoint-method", "uniform");
    count = r.integer("--activations-checkpoint-num-layers", r.integer("--checkpoint-num-layers", 1, 0), 0);
  }
  if (granularity.empty()) return Checkpointing::none;
  if (granularity == "selective") return Checkpointing::selective;
  if (granularity != "full")
    throw WorkloadError("--recompute-granularity", "= " + granularity + " is neither full nor selective");
  if (method.empty()) method = "uniform";
  if (method == "uniform") {
    if (count > 1)
      assumed.push_back("uniform recomputation of " + n(count) +
                        " layers at a time modelled as full recomputation of every layer: the same recomputed work, "
                        "one stashed input per layer instead of one per " +
                        n(count) + " layers");
    return Checkpointing::full;
  }
  if (method != "block") throw WorkloadError("--recompute-method", "= " + method + " is neither uniform nor block");
  if (count == 0) return Checkpointing::none;
  // The first `count` layers of each model chunk (transformer_block.py _checkpointed_forward).
  if (count < layers_per_chunk) recompute_layers = count;
  return Checkpointing::full;
}

Attention attention(const Reader& r, std::vector<std::string>& assumed) {
  if (r.has("--use-flash-attn")) return Attention::flash;
  std::string backend = r.word("--attention-backend", "");
  // Megatron-Core models on Transformer Engine (--use-mcore-models, the default transformer_impl)
  // attend with TE's DotProductAttention, which picks a fused or flash kernel itself; the flag that
  // names the backend (default auto) came later (core_r0.10). Only legacy models and
  // --transformer-impl local run the unfused softmax path.
  if (backend.empty() && r.has("--use-mcore-models") && !r.has("--use-legacy-models") &&
      r.word("--transformer-impl", "transformer_engine") != "local")
    backend = "auto";
  if (backend.empty() || backend == "unfused" || backend == "local") return Attention::unfused;
  if (backend == "flash") return Attention::flash;
  if (backend == "fused" || backend == "auto") {
    assumed.push_back("--attention-backend " + backend +
                      ": Transformer Engine's fused attention costed as one FlashAttention-2 kernel");
    return Attention::flash;
  }
  throw WorkloadError("--attention-backend", "= " + backend + " is not one of flash, fused, unfused, local, auto");
}

// A Python list expression of 0s and 1s as Megatron-LM's --moe-layer-freq takes it ("([0]*3+[1]*58)",
// "([1]*3+[0]*2)*2"): sums of lists, lists repeated by an integer, parentheses.
class PatternParser {
 public:
  explicit PatternParser(std::string text) : t_(std::move(text)) { std::erase(t_, ' '); }
  std::vector<int> parse() {
    std::vector<int> out = sum();
    if (at_ != t_.size()) fail();
    return out;
  }

 private:
  std::vector<int> sum() {
    std::vector<int> out = product();
    while (peek('+')) {
      ++at_;
      const auto more = product();
      out.insert(out.end(), more.begin(), more.end());
    }
    return out;
  }
  std::vector<int> product() {
    std::vector<int> out = atom();
    while (peek('*')) {
      ++at_;
      const size_t from = at_;
      while (at_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[at_]))) ++at_;
      if (from == at_ || at_ - from > 7) fail();
      const size_t times = std::stoul(t_.substr(from, at_ - from));
      if (out.size() * times > 1'000'000) fail();
      std::vector<int> repeated;
      for (size_t k = 0; k < times; ++k) repeated.insert(repeated.end(), out.begin(), out.end());
      out = std::move(repeated);
    }
    return out;
  }
  std::vector<int> atom() {
    if (peek('(')) {
      ++at_;
      auto out = sum();
      if (!peek(')')) fail();
      ++at_;
      return out;
    }
    if (!peek('[')) fail();
    ++at_;
    std::vector<int> out;
    while (!peek(']')) {
      if (peek('0') || peek('1'))
        out.push_back(t_[at_++] - '0');
      else
        fail();
      if (peek(',')) ++at_;
    }
    ++at_;
    return out;
  }
  bool peek(char c) const { return at_ < t_.size() && t_[at_] == c; }
  [[noreturn]] void fail() const {
    throw WorkloadError("--moe-layer-freq",
                        "= " + t_ + " is neither an integer nor a list of 0s and 1s such as ([0]*3+[1]*58)");
  }
  std::string t_;
  size_t at_ = 0;
};

std::vector<int> layer_pattern(const std::string& text) {
  return PatternParser(text).parse();
}

// The (first_dense, every) whose MoE layers are exactly the pattern's 1s; false if there is none.
bool pattern_as_moe(const std::vector<int>& pattern, MoeConfig& moe) {
  const int64_t n = static_cast<int64_t>(pattern.size());
  int64_t first = 0;
  while (first < n && pattern[static_cast<size_t>(first)] == 0) ++first;
  if (first == n) return false;
  for (int64_t every = 1; every <= n; ++every)
    for (int64_t dense = 0; dense <= first; ++dense) {
      bool same = true;
      for (int64_t l = 0; l < n && same; ++l)
        same = (pattern[static_cast<size_t>(l)] == 1) == (l >= dense && l % every == every - 1);
      if (same) {
        moe.every = every;
        moe.first_dense = dense;
        return true;
      }
    }
  return false;
}

// The masked-softmax fusion exists only on the unfused path: with a fused or flash kernel turning it
// off changes nothing.
void drop_unfused_only(std::vector<std::string>& inexpressible, Attention attn) {
  if (attn == Attention::flash)
    std::erase_if(inexpressible, [](const std::string& a) { return a.rfind("--no-masked-softmax-fusion", 0) == 0; });
}

struct Grid {
  int64_t tensor, pipe, chunks, data, expert;  // data: paratwin's, without the expert ranks
  bool interleaved;
};

}  // namespace

int64_t megatron_padded_vocab(int64_t vocab, int64_t divisible_by, int64_t tensor_size) {
  const int64_t multiple = divisible_by * tensor_size;
  return (vocab + multiple - 1) / multiple * multiple;
}

namespace {

// A rule of the workload format that the translated command breaks, said of the argument the user
// wrote: the workload's field means nothing to someone who gave Megatron-LM flags.
WorkloadError flag_error(const WorkloadError& e) {
  static const std::vector<std::pair<std::string, std::string>> kFlags = {
      {"model.layers", "--num-layers"},
      {"model.hidden", "--hidden-size"},
      {"model.heads", "--num-attention-heads"},
      {"model.ffn_hidden", "--ffn-hidden-size"},
      {"model.kv_heads", "--num-query-groups"},
      {"model.seq_len", "--seq-length"},
      {"model.vocab", "--vocab-size, padded to a multiple of --make-vocab-size-divisible-by,"},
      {"model.moe.experts", "--num-experts"},
      {"model.moe.top_k", "--moe-router-topk"},
      {"model.moe.capacity_factor", "--moe-expert-capacity-factor"},
      {"model.moe.every", "--moe-layer-freq"},
      {"training.global_batch", "--global-batch-size"},
      {"training.micro_batch", "--micro-batch-size"},
      {"parallelism.data.size", "the data-parallel size (world size / tensor / pipeline)"},
      {"parallelism.tensor.size", "--tensor-model-parallel-size"},
      {"parallelism.pipeline.stages", "--pipeline-model-parallel-size"},
      {"parallelism.pipeline.chunks", "--num-layers-per-virtual-pipeline-stage"},
      {"parallelism.pipeline.first_stage_layers", "--decoder-first-pipeline-num-layers"},
      {"parallelism.pipeline.last_stage_layers", "--decoder-last-pipeline-num-layers"},
      {"parallelism.pipeline.embedding_in_split", "--account-for-embedding-in-pipeline-split"},
      {"parallelism.pipeline", "the pipeline split"},
      {"parallelism.expert.size", "--expert-model-parallel-size"},
      {"parallelism.context.size", "--context-parallel-size"},
      {"placement.devices_per_node", "--nproc_per_node"},
  };
  for (const auto& [field, flag] : kFlags)
    if (e.path() == field) return WorkloadError(flag + " (the workload's " + field + ")", e.message());
  return WorkloadError("the imported workload" + (e.path().empty() ? "" : ": " + e.path()), e.message());
}

}  // namespace

namespace {
MegatronImport translate(const std::vector<std::string>& words, const MegatronImportOptions& o);
}  // namespace

MegatronImport import_megatron(const std::vector<std::string>& words, const MegatronImportOptions& o) {
  try {
    return translate(words, o);
  } catch (const MegatronArgumentsError&) {
    throw;
  } catch (const WorkloadError& e) {
    // The arguments as the table sorts them, when they can be split at all.
    Sorted s;
    try {
      s = sort_arguments(split_arguments(words));
    } catch (const WorkloadError&) {
      throw e;
    }
    std::vector<std::string> unknown = o.allow_unknown ? std::vector<std::string>{} : s.unknown;
    std::vector<std::string> cannot = o.approximate ? std::vector<std::string>{} : s.inexpressible;
    try {
      std::vector<std::string> ignored;
      drop_unfused_only(cannot, attention(Reader(s), ignored));
    } catch (const WorkloadError&) {
      // a bad --attention-backend: listed as it stands
    }
    if (unknown.empty() && cannot.empty()) throw;
    const std::string error = e.what();
    throw MegatronArgumentsError(error + "; and " + n(static_cast<int64_t>(unknown.size() + cannot.size())) +
                                     " argument(s) unknown or inexpressible",
                                 unknown, cannot, error);
  }
}

namespace {

// Megatron-LM's arguments translated into a workload step by step: each step reads the arguments of
// one part (the model, the parallel sizes, MoE, the pipeline, the batch, the precision, the sharding,
// ...), checks them against what the earlier steps found, and keeps what later steps and the document
// need; then the document, in the order of the format's README, and its description.
class Translator {
 public:
  Translator(const std::vector<std::string>& words, const MegatronImportOptions& o)
      : o(o),
        s(sort_arguments(split_arguments(words))),
        r(s),
        inexpressible(s.inexpressible),
        assumed(out.assumptions) {}
  MegatronImport run();

 private:
  // The model: its size and the layer's shape.
  void read_model();
  // The parallel sizes and the world size, and the data-parallel size they leave.
  void read_parallelism();
  // The mixture of experts: experts, routing, capacity, which layers, the dispatcher.
  void read_moe();
  // The pipeline: the layers' split over the stages and the virtual stages.
  void read_pipeline();
  // What tensor parallelism splits, and sequence parallelism.
  void read_tensor_split();
  // The micro-batch and the global batch.
  void read_batch();
  // The precision: 16-bit, fp8 and the gradients' reduction.
  void read_precision();
  // The distributed optimizer and Megatron-FSDP's sharding: the ZeRO stage.
  void read_sharding();
  // Recomputation, the attention kernel, dropout and the padded vocabulary.
  void read_memory_and_vocab();
  // Unknown and inexpressible arguments refused (one error listing all), unless allowed.
  void refuse_unknown_or_inexpressible();
  // The framework profile.
  void choose_framework();
  // The communication overlaps as Megatron-LM runs them.
  void read_communication();
  // The workload's name and model.
  void model_section(nlohmann::ordered_json& doc);
  // The workload's training and parallelism.
  void training_and_parallelism(nlohmann::ordered_json& doc);
  // The workload's optimizations, placement and framework.
  void optimizations_and_placement(nlohmann::ordered_json& doc);
  // The workload's description: where every argument went.
  void describe(nlohmann::ordered_json& doc);

  const MegatronImportOptions& o;
  const Sorted s;
  const Reader r;
  MegatronImport out;
  std::vector<std::string> inexpressible;
  std::vector<std::string>& assumed;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t seq = 0;
  int64_t kv_heads = 0;
  int64_t four_h = 0;
  int64_t default_ffn = 0;
  int64_t ffn = 0;
  int64_t tp = 0;
  int64_t pp = 0;
  int64_t cp = 0;
  int64_t ep = 0;
  int64_t etp = 0;
  int64_t model_parallel = 0;
  int64_t dp = 0;
  int64_t experts = 0;
  int64_t first_layers = 0;
  int64_t last_layers = 0;
  int64_t slots = 0;
  int64_t expert_axis = 0;
  int64_t micro = 0;
  int64_t per_step = 0;
  int64_t global = 0;
  int64_t micro_batches = 0;
  int64_t recompute_layers = 0;
  int64_t divisible_by = 0;
  int64_t vocab = 0;
  int64_t padded = 0;
  int64_t per_node = 0;
  bool swiglu = false;
  bool folded = false;
  bool embedding_counted = false;
  bool loss_counted = false;
  bool uneven = false;
  bool sequence_parallel = false;
  bool megatron_fsdp = false;
  bool overlap_grads = false;
  bool overlap_tp = false;
  bool scatter_gather = false;
  bool overlap_params = false;
  bool overlap_tensor = false;
  bool replicas = false;
  bool profile_2021 = false;
  std::string normalization;
  std::string position;
  std::string cp_comm;
  std::string tp_pp;
  std::string dispatcher = "alltoall";
  std::string counted;
  std::string fp8;
  std::string framework;
  WorldSize world{};
  MoeConfig moe{};
  Grid g{};
  Dtype dtype = Dtype::fp32;
  std::optional<Dtype> reduce{};
  int zero = 0;
  Checkpointing ckpt{};
  Attention attn{};
  double dropout = 0;
};

void Translator::read_model() {
  if (!s.empty_values.empty())
    assumed.push_back("given without a value, as a launch script run without its arguments leaves them: " +
                      join(s.empty_values) + " (no effect on the cost model)");

  // Model.
  layers = r.required("--num-layers");
  hidden = r.required("--hidden-size");
  heads = r.required("--num-attention-heads");
  if (!r.has("--seq-length") && !r.has("--encoder-seq-length"))
    throw WorkloadError("--seq-length", "is required (Megatron-LM needs it too)");
  seq = r.integer("--seq-length", r.integer("--encoder-seq-length", 0));
  if (r.has("--max-position-embeddings") && r.integer("--max-position-embeddings", 0) < seq)
    throw WorkloadError("--max-position-embeddings",
                        "= " + n(r.integer("--max-position-embeddings", 0)) + " is less than --seq-length " + n(seq));
  if (hidden % heads != 0)
    throw WorkloadError("--hidden-size", "= " + n(hidden) + " is not divisible by --num-attention-heads " + n(heads));
  if (r.has("--kv-channels") && r.integer("--kv-channels", 0) != hidden / heads && !r.has("--multi-latent-attention"))
    inexpressible.push_back(r.find("--kv-channels")->text() +
                            " (attention heads of another size than hidden / heads = " + n(hidden / heads) +
                            " are not modelled)");
  if (r.has("--batch-size"))
    inexpressible.push_back(r.find("--batch-size")->text() +
                            " (no longer valid in Megatron-LM: give --micro-batch-size and --global-batch-size)");
  // The layer's shape (Megatron-LM megatron/training/arguments.py, core_r0.8.0): grouped-query
  // attention with --num-query-groups key/value heads (1 unless given), SwiGLU, RMSNorm, rotary or no
  // position embeddings, linear layers without biases, an output layer of its own.
  swiglu = r.has("--swiglu");
  kv_heads = 0;
  if (r.has("--group-query-attention")) {
    kv_heads = r.integer("--num-query-groups", 1);
    if (kv_heads < 1 || heads % kv_heads != 0)
      throw WorkloadError("--num-query-groups",
                          "= " + n(kv_heads) + " does not divide --num-attention-heads " + n(heads));
  }
  normalization = r.word("--normalization", "LayerNorm");
  if (normalization != "LayerNorm" && normalization != "RMSNorm")
    inexpressible.push_back(r.find("--normalization")->text() + " (LayerNorm and RMSNorm are modelled)");
  position = r.word("--position-embedding-type", "learned_absolute");
  if (r.has("--use-rotary-position-embeddings")) position = "rope";
  if (position != "learned_absolute" && position != "rope" && position != "none")
    inexpressible.push_back(r.find("--position-embedding-type")->text() +
                            " (learned_absolute, rope and none are modelled)");
  // Without --ffn-hidden-size, SwiGLU's is two thirds of 4·hidden rounded down to a multiple of 64
  // (arguments.py, core_r0.8.0 l.378-386), keeping the parameters of a 4·hidden GeLU MLP.
  four_h = product(4, hidden, "--hidden-size", "the default --ffn-hidden-size");
  default_ffn = swiglu ? four_h * 2 / 3 / 64 * 64 : four_h;
  ffn = r.integer("--ffn-hidden-size", default_ffn);
}

void Translator::read_parallelism() {
  // Parallelism and the world size.
  tp = r.integer("--tensor-model-parallel-size", r.integer("--model-parallel-size", 1));
  if (!r.has("--tensor-model-parallel-size") && r.has("--model-parallel-size"))
    assumed.push_back("--model-parallel-size read as --tensor-model-parallel-size, as Megatron-LM 2021 did");
  pp = r.integer("--pipeline-model-parallel-size", 1);
  // Context parallelism: the data-parallel size is what tensor × context × pipeline leave (Megatron-LM
  // megatron/core/parallel_state.py initialize_model_parallel); --cp-comm-type p2p by default.
  cp = r.integer("--context-parallel-size", 1);
  cp_comm = r.word("--cp-comm-type", "p2p");
  if (cp > 1 && cp_comm != "p2p" && cp_comm != "a2a" && cp_comm != "allgather")
    inexpressible.push_back(r.find("--cp-comm-type")->text() + " (p2p, a2a and allgather are modelled)");
  ep = r.integer("--expert-model-parallel-size", 1);
  // --expert-tensor-parallel-size: the tensor size (TED, Megatron-LM's default) or 1 (experts whole,
  // the expert-parallel group folded over the tensor ranks: paratwin's expert axis is then EP / TP).
  etp = r.integer("--expert-tensor-parallel-size", tp);
  folded = etp == 1 && tp > 1;
  if (etp != tp && !folded)
    inexpressible.push_back(r.find("--expert-tensor-parallel-size")->text() +
                            " (experts are split over the whole tensor group of size " + n(tp) + " or not at all: 1)");
  if (folded && ep % tp != 0)
    inexpressible.push_back("--expert-model-parallel-size " + n(ep) +
                            " with --expert-tensor-parallel-size 1: paratwin folds whole tensor groups into the "
                            "expert-parallel group, so it must be a multiple of --tensor-model-parallel-size " +
                            n(tp));
  if (folded && cp > 1)
    inexpressible.push_back("--expert-tensor-parallel-size 1 with --context-parallel-size " + n(cp) +
                            " (the expert group folded over context ranks is not modelled)");
  world = world_size(s, o);
  tp_pp = "--tensor-model-parallel-size " + n(tp) + " × --pipeline-model-parallel-size " + n(pp) +
          (cp > 1 ? " × --context-parallel-size " + n(cp) : "");
  const int64_t model_parallel =
      product(product(tp, pp, "--pipeline-model-parallel-size", tp_pp), cp, "--context-parallel-size", tp_pp);
  if (world.ranks % model_parallel != 0)
    throw WorkloadError("world size",
                        n(world.ranks) + " (" + world.source + ") is not divisible by " + tp_pp + " = " +
                            n(model_parallel) +
                            (o.world_size > 0 ? "" : ": give the run's size with paratwin's --world-size N"));
  dp = world.ranks / model_parallel;  // Megatron-LM's data-parallel size, expert ranks included
}

void Translator::read_moe() {
  // MoE.
  experts = r.integer("--num-experts", 0, 0);
  if (ep > 1 && experts == 0)
    throw WorkloadError("--expert-model-parallel-size", "= " + n(ep) + " needs --num-experts");
  dispatcher = "alltoall";
  if (experts > 0) {
    if (experts < 2) throw WorkloadError("--num-experts", "= 1 is not a mixture of experts (paratwin needs 2 or more)");
    if (dp % ep != 0 && !folded)
      throw WorkloadError("--expert-model-parallel-size", "= " + n(ep) + " does not divide the data-parallel size " +
                                                              n(dp) + " (world " + n(world.ranks) + " = " +
                                                              world.source + ", / (" + tp_pp + "))" +
                                                              (o.world_size > 0 ? ""
                                                                                : ": give the run's size with "
                                                                                  "paratwin's --world-size N"));
    if (folded && ep % tp == 0 && dp % (ep / tp) != 0)
      throw WorkloadError("--expert-model-parallel-size",
                          "= " + n(ep) +
                              " with --expert-tensor-parallel-size 1 does not divide --tensor-model-parallel-size " +
                              n(tp) + " × the data-parallel size " + n(dp));
    if (experts % ep != 0)
      throw WorkloadError("--num-experts",
                          "= " + n(experts) + " is not divisible by --expert-model-parallel-size " + n(ep));
    moe.experts = experts;
    moe.top_k = r.integer("--moe-router-topk", 2);
    if (moe.top_k > experts)
      throw WorkloadError("--moe-router-topk", "= " + n(moe.top_k) + " exceeds --num-experts " + n(experts));
    const std::string freq = r.word("--moe-layer-freq", "1");
    if (freq.find('[') != std::string::npos) {
      // A pattern of MoE (1) and dense (0) layers (arguments.py moe_freq_type): expressible as dense
      // first layers, then every k-th layer MoE.
      const std::vector<int> pattern = layer_pattern(freq);
      if (static_cast<int64_t>(pattern.size()) != layers)
        throw WorkloadError("--moe-layer-freq", "= " + freq + " describes " + n(static_cast<int64_t>(pattern.size())) +
                                                    " layers, not --num-layers " + n(layers));
      if (!pattern_as_moe(pattern, moe))
        inexpressible.push_back("--moe-layer-freq " + freq +
                                " (dense first layers, then every k-th layer MoE, is what is modelled)");
    } else if (freq.find_first_not_of("0123456789") != std::string::npos) {
      inexpressible.push_back("--moe-layer-freq " + freq + " (only every k-th layer MoE is modelled)");
    } else {
      moe.every = r.integer("--moe-layer-freq", 1);
      if (moe.every > layers) throw WorkloadError("--moe-layer-freq", "= " + freq + " exceeds --num-layers");
      if (moe.every > 1)
        assumed.push_back("MoE layers are layers k-1, 2k-1, … of every k = " + freq +
                          " (Megatron-LM's are 0, k, …): the same count");
    }
    if (r.has("--moe-expert-capacity-factor")) {
      moe.capacity_factor = r.number("--moe-expert-capacity-factor", 1.0, 1e-9, 1e6);
      if (!r.has("--moe-pad-expert-input-to-capacity"))
        assumed.push_back(
            "every expert computes its full capacity (Megatron-LM does so only with "
            "--moe-pad-expert-input-to-capacity; without it, at most that many tokens)");
    } else {
      moe.capacity_factor = 0;
      assumed.push_back("dropless routing with every expert equally loaded (model.moe.imbalance 1)");
    }
    if (r.has("--moe-ffn-hidden-size")) {
      const int64_t moe_ffn = r.integer("--moe-ffn-hidden-size", ffn);
      if (moe.every == 1 && moe.first_dense == 0)
        ffn = moe_ffn;  // no dense MLP is left
      else if (moe_ffn != ffn)
        moe.ffn_hidden = moe_ffn;  // fine-grained experts beside dense layers
    }
    moe.shared_ffn = r.integer("--moe-shared-expert-intermediate-size", 0, 1);
    dispatcher = r.word("--moe-token-dispatcher-type", "allgather");
    if (dispatcher != "alltoall" && dispatcher != "allgather")
      inexpressible.push_back("--moe-token-dispatcher-type " + dispatcher +
                              " (paratwin models the alltoall and allgather dispatchers)");
  }
}

void Translator::read_pipeline() {
  // Pipeline: layers split evenly, or Megatron-Core's uneven splits (the first/last stage's layers, or
  // the embedding and the loss counted as layers: megatron/training/arguments.py, main 2026-11);
  // virtual stages as model chunks.
  first_layers = r.integer("--decoder-first-pipeline-num-layers", 0, 1);
  last_layers = r.integer("--decoder-last-pipeline-num-layers", 0, 1);
  embedding_counted = r.has("--account-for-embedding-in-pipeline-split");
  loss_counted = r.has("--account-for-loss-in-pipeline-split");
  uneven = first_layers > 0 || last_layers > 0;
  if (uneven && (embedding_counted || loss_counted))
    throw WorkloadError(
        embedding_counted ? "--account-for-embedding-in-pipeline-split" : "--account-for-loss-in-pipeline-split",
        "excludes --decoder-first/last-pipeline-num-layers (as in Megatron-Core)");
  slots = layers + (embedding_counted ? 1 : 0) + (loss_counted ? 1 : 0);
  const std::string counted =
      std::string(embedding_counted ? " + the embedding" : "") + (loss_counted ? " + the loss" : "");
  if (!uneven && slots % pp != 0)
    throw WorkloadError("--num-layers",
                        "= " + n(layers) + counted + " is not divisible by --pipeline-model-parallel-size " + n(pp));
  // Folded experts span the tensor ranks: of Megatron-LM's EP, EP / TP ranks come out of the data axis.
  expert_axis = experts > 0 ? (folded ? std::max<int64_t>(1, ep / tp) : ep) : 1;
  g = Grid{tp, pp, 1, dp / expert_axis, expert_axis, false};
  if (r.has("--num-layers-per-virtual-pipeline-stage") && r.has("--num-virtual-stages-per-pipeline-rank"))
    throw WorkloadError("--num-layers-per-virtual-pipeline-stage",
                        "and --num-virtual-stages-per-pipeline-rank exclude each other (as in Megatron-LM)");
  if (const Arg* a = r.find("--num-layers-per-virtual-pipeline-stage")) {
    if (uneven)
      throw WorkloadError(a->flag,
                          "with --decoder-first/last-pipeline-num-layers: give --num-virtual-stages-per-pipeline-rank "
                          "(as Megatron-LM asks)");
    const int64_t per_virtual = parse_int(*a, 1);
    if ((slots / pp) % per_virtual != 0)
      throw WorkloadError(a->flag, "= " + n(per_virtual) + " does not divide the " + n(slots / pp) +
                                       " layers per stage (--num-layers " + n(layers) + counted +
                                       " / --pipeline-model-parallel-size " + n(pp) + ")");
    g.chunks = slots / pp / per_virtual;
    g.interleaved = true;
  }
  if (const Arg* a = r.find("--num-virtual-stages-per-pipeline-rank")) {
    g.chunks = parse_int(*a, 1);
    const int64_t stages = product(pp, g.chunks, a->flag, "--pipeline-model-parallel-size × " + a->flag);
    if (!uneven && slots == layers && layers % stages != 0)
      throw WorkloadError(a->flag, "= " + n(g.chunks) + ": --num-layers " + n(layers) +
                                       " is not divisible by --pipeline-model-parallel-size " + n(pp) + " × " +
                                       n(g.chunks) + " = " + n(stages));
    g.interleaved = true;
  }
  if (g.interleaved && pp == 1)
    throw WorkloadError("--pipeline-model-parallel-size",
                        "= 1: the interleaved schedule (virtual pipeline stages) "
                        "needs more than one stage");
}

void Translator::read_tensor_split() {
  // Tensor parallelism: Megatron-LM splits heads and the MLP over the tensor group.
  if (heads % tp != 0)
    throw WorkloadError("--num-attention-heads",
                        "= " + n(heads) + " is not divisible by --tensor-model-parallel-size " + n(tp));
  if (ffn % tp != 0)
    throw WorkloadError("--ffn-hidden-size",
                        "= " + n(ffn) + " is not divisible by --tensor-model-parallel-size " + n(tp));
  sequence_parallel = r.has("--sequence-parallel");
  if (sequence_parallel && tp == 1) {
    sequence_parallel = false;
    assumed.push_back("--sequence-parallel dropped: Megatron-LM turns it off with tensor-parallel size 1");
  }
  if (sequence_parallel && seq % tp != 0)
    throw WorkloadError("--seq-length", "= " + n(seq) + " is not divisible by --tensor-model-parallel-size " + n(tp) +
                                            " (needed by --sequence-parallel)");
}

void Translator::read_batch() {
  // Batch.
  if (!r.has("--micro-batch-size")) assumed.push_back("--micro-batch-size 1 (not given)");
  micro = r.integer("--micro-batch-size", 1);
  const int64_t per_step =
      product(micro, dp, "--micro-batch-size", "--micro-batch-size × the data-parallel size " + n(dp));
  global = r.integer("--global-batch-size", per_step);
  if (global % per_step != 0)
    throw WorkloadError("--global-batch-size", "= " + n(global) + " is not divisible by --micro-batch-size " +
                                                   n(micro) + " × data-parallel size " + n(dp) + " = " + n(per_step));
  micro_batches = global / per_step;
  if (g.interleaved && micro_batches % pp != 0)
    throw WorkloadError("--global-batch-size",
                        "= " + n(global) + " makes " + n(micro_batches) +
                            " micro-batches per iteration, not a multiple of --pipeline-model-parallel-size " + n(pp) +
                            " as the interleaved schedule needs");
}

void Translator::read_precision() {
  // Precision.
  if (r.has("--fp16") && r.has("--bf16")) throw WorkloadError("--fp16", "and --bf16 exclude each other");
  dtype = r.has("--bf16") ? Dtype::bf16 : r.has("--fp16") ? Dtype::fp16 : Dtype::fp32;
  // FP8 through Transformer Engine (megatron/core/transformer/transformer_config.py: --fp8-format e4m3 or
  // hybrid enables it, --fp8-recipe delayed by default; --fp8-e4m3 and --fp8-hybrid before 2024).
  if (r.has("--fp8-format") || r.has("--fp8-e4m3") || r.has("--fp8-hybrid")) {
    const std::string recipe = r.word("--fp8-recipe", "delayed");
    if (recipe == "delayed")
      fp8 = "delayed";
    else if (recipe == "tensorwise")
      fp8 = "current";
    else
      inexpressible.push_back(r.find("--fp8-recipe")->text() +
                              " (the delayed and tensorwise fp8 recipes are modelled, not block-scaled ones)");
  }
  if (r.has("--fp8-param-gather")) {
    if (!r.has("--fp8-format") && !r.has("--fp8-e4m3") && !r.has("--fp8-hybrid"))
      throw WorkloadError("--fp8-param-gather", "needs --fp8-format (fp8 parameters exist only in fp8 mode)");
    if (!r.has("--use-distributed-optimizer") && !r.has("--use-megatron-fsdp") && !r.has("--use-custom-fsdp"))
      throw WorkloadError("--fp8-param-gather",
                          "needs --use-distributed-optimizer (Megatron-LM's arguments.py asserts it for training)");
  }
  // Megatron-LM reduces bf16 gradients in fp32 unless told otherwise (accumulate_allreduce_grads_in_fp32).
  if ((dtype == Dtype::bf16 && !r.has("--grad-reduce-in-bf16")) ||
      (dtype == Dtype::fp16 && r.has("--accumulate-allreduce-grads-in-fp32")))
    reduce = Dtype::fp32;
}

void Translator::read_sharding() {
  // Megatron-FSDP (--use-megatron-fsdp; --use-custom-fsdp before it): the sharding strategies no_shard,
  // optim, optim_grads and optim_grads_params are ZeRO stages 0-3 (megatron/training/arguments.py,
  // main 2026-11: default optim_grads_params; v1 forces the distributed optimizer).
  megatron_fsdp = r.has("--use-megatron-fsdp") || r.has("--use-custom-fsdp");
  zero = r.has("--use-distributed-optimizer") ? 1 : 0;
  if (megatron_fsdp) {
    const std::string strategy = r.word("--data-parallel-sharding-strategy", "optim_grads_params");
    static const std::pair<const char*, int> kStrategies[] = {
        {"no_shard", 0}, {"optim", 1}, {"optim_grads", 2}, {"optim_grads_params", 3}};
    zero = -1;
    for (const auto& [name, stage] : kStrategies)
      if (strategy == name) zero = std::max(stage, 1);  // v1 always runs the distributed optimizer
    if (zero < 0)
      throw WorkloadError("--data-parallel-sharding-strategy",
                          "= " + strategy + " is not one of no_shard, optim, optim_grads, optim_grads_params");
    if (!r.has("--data-parallel-sharding-strategy"))
      assumed.push_back("--data-parallel-sharding-strategy optim_grads_params (Megatron-LM's default): ZeRO-3");
  } else if (r.has("--data-parallel-sharding-strategy")) {
    assumed.push_back(r.find("--data-parallel-sharding-strategy")->text() +
                      " has no effect without --use-megatron-fsdp");
  }
  if (zero == 3 && pp > 1)
    inexpressible.push_back("--use-megatron-fsdp with --pipeline-model-parallel-size " + n(pp) +
                            " (fully sharded parameters across pipeline stages are not modelled)");
}

void Translator::read_memory_and_vocab() {
  recompute_layers = 0;
  ckpt = checkpointing(r, layers / pp / g.chunks, assumed, recompute_layers);
  attn = attention(r, assumed);
  drop_unfused_only(inexpressible, attn);
  dropout = r.number("--attention-dropout", 0.1, 0.0, 0.999);
  divisible_by = r.integer("--make-vocab-size-divisible-by", 128);
  vocab = tokenizer_vocab(r, s, o, assumed);
  product(divisible_by, tp, "--make-vocab-size-divisible-by", "--make-vocab-size-divisible-by × tensor size");
  padded = megatron_padded_vocab(vocab, divisible_by, tp);
}

void Translator::refuse_unknown_or_inexpressible() {
  // Everything the user must see before a file is written.
  if ((!s.unknown.empty() && !o.allow_unknown) || (!inexpressible.empty() && !o.approximate)) {
    std::string message;
    std::vector<std::string> unknown = o.allow_unknown ? std::vector<std::string>{} : s.unknown;
    std::vector<std::string> cannot = o.approximate ? std::vector<std::string>{} : inexpressible;
    if (!unknown.empty())
      message += n(static_cast<int64_t>(unknown.size())) + " argument" + (unknown.size() == 1 ? "" : "s") +
                 " paratwin does not know: " + join(unknown) + " (--allow-unknown imports without them)";
    if (!cannot.empty())
      message += std::string(message.empty() ? "" : "; ") + n(static_cast<int64_t>(cannot.size())) + " argument" +
                 (cannot.size() == 1 ? "" : "s") + " the workload format cannot express: " + join(cannot, "; ") +
                 " (--approximate imports without them)";
    throw MegatronArgumentsError(message, unknown, cannot);
  }
  if (o.allow_unknown) out.unknown = s.unknown;
  if (o.approximate) out.dropped = inexpressible;
  out.not_modelled = s.not_modelled;
}

void Translator::choose_framework() {
  // The stack: named, else the Megatron-LM that has every feature the arguments use (flash attention,
  // the bucketed gradient overlap, MoE, the Transformer Engine overlaps and uneven pipeline splits came with
  // Megatron-Core).
  framework = o.framework;
  if (framework.empty() && megatron_fsdp) {
    framework = "megatron-fsdp";
    assumed.push_back("framework megatron-fsdp (--use-megatron-fsdp)");
  }
  if (framework.empty()) {
    const bool core = attn == Attention::flash || r.has("--overlap-grad-reduce") || r.has("--overlap-param-gather") ||
                      r.has("--tp-comm-overlap") || r.has("--num-experts") || first_layers > 0 || last_layers > 0 ||
                      embedding_counted || loss_counted;
    framework = core ? "megatron-core" : "megatron-lm-2022";
    assumed.push_back("framework " + framework +
                      (core ? " (the arguments use flags Megatron-LM gained with Megatron-Core)"
                            : " (no flag newer than Megatron-LM 2022)"));
  }
}

void Translator::read_communication() {
  // Communication settings as Megatron-LM runs them.
  profile_2021 = framework == "megatron-lm-2021";
  replicas = dp > 1;
  overlap_grads = r.has("--overlap-grad-reduce") || r.word("--DDP-impl", "local") == "torch";
  if (overlap_grads && !replicas) {
    overlap_grads = false;
    assumed.push_back("no data parallelism: the gradient-reduction overlap has nothing to overlap");
  }
  // The asynchronous tensor-parallel all-reduce came to Megatron-LM late in 2021 (after the SC21 runs).
  overlap_tp = tp > 1 && !profile_2021 && !r.has("--no-async-tensor-model-parallel-allreduce");
  scatter_gather = tp > 1 && pp > 1 && !r.has("--no-scatter-gather-tensors-in-pipeline");
  overlap_params = r.has("--overlap-param-gather");
  if (overlap_params && zero == 3) {
    overlap_params = false;
    assumed.push_back(
        "--overlap-param-gather with fully sharded parameters: the per-layer gathers prefetched one layer "
        "ahead, as the megatron-fsdp profile's double buffer does");
  }
  if (overlap_params && ((zero == 0) || !replicas)) {
    overlap_params = false;
    assumed.push_back(!replicas ? "no data parallelism: the parameter all-gather overlap has nothing to gather"
                                : "--overlap-param-gather without --use-distributed-optimizer has no effect");
  }
  overlap_tensor = r.has("--tp-comm-overlap");
  if (overlap_tensor && (tp == 1 || !sequence_parallel)) {
    overlap_tensor = false;
    assumed.push_back("--tp-comm-overlap without tensor and sequence parallelism has no effect");
  }
}

void Translator::model_section(nlohmann::ordered_json& doc) {
  const std::string name =
      !o.name.empty() ? o.name : "megatron-gpt-" + n(layers) + "l-" + n(hidden) + "h-" + n(world.ranks);
  doc["name"] = name;
  doc["description"] = "";  // filled below
  auto& m = doc["model"];
  m["layers"] = layers;
  m["hidden"] = hidden;
  m["heads"] = heads;
  m["ffn_hidden"] = ffn;
  m["seq_len"] = seq;
  m["vocab"] = padded;
  if (attn == Attention::flash) m["attention"] = "flash";
  if (dropout > 0) m["attention_dropout"] = dropout;
  if (kv_heads > 0 && kv_heads != heads) m["kv_heads"] = kv_heads;
  if (swiglu) m["mlp"] = "swiglu";
  if (normalization == "RMSNorm") m["norm"] = "rmsnorm";
  if (position == "rope" || position == "none") m["position"] = position;
  if (r.has("--disable-bias-linear")) m["bias"] = false;
  if (r.has("--add-qkv-bias")) m["qkv_bias"] = true;
  if (r.has("--untie-embeddings-and-output-weights")) m["tied_embeddings"] = false;
  m["final_norm"] = true;  // GPTModel's final_layernorm (megatron/core/models/gpt/gpt_model.py)
  if (moe.enabled()) {
    m["moe"] = {
        {"experts", moe.experts}, {"top_k", moe.top_k}, {"capacity_factor", moe.capacity_factor}, {"every", moe.every}};
    if (moe.ffn_hidden > 0) m["moe"]["ffn_hidden"] = moe.ffn_hidden;
    if (moe.shared_ffn > 0) m["moe"]["shared_ffn"] = moe.shared_ffn;
    if (moe.first_dense > 0) m["moe"]["first_dense"] = moe.first_dense;
  }
  if (r.has("--multi-latent-attention")) {
    // Megatron-LM's defaults (arguments.py, main 2026-11): no query latent, kv_lora_rank 32, 128 + 64
    // query/key and 128 value dimensions per head.
    m["mla"] = nlohmann::ordered_json::object();
    if (r.has("--q-lora-rank")) m["mla"]["q_lora_rank"] = r.integer("--q-lora-rank", 0);
    m["mla"]["kv_lora_rank"] = r.integer("--kv-lora-rank", 32);
    m["mla"]["qk_head_dim"] = r.integer("--qk-head-dim", 128);
    m["mla"]["rope_head_dim"] = r.integer("--qk-pos-emb-head-dim", 64);
    m["mla"]["v_head_dim"] = r.integer("--v-head-dim", 128);
  }
}

void Translator::training_and_parallelism(nlohmann::ordered_json& doc) {
  auto& t = doc["training"];
  t["global_batch"] = global;
  t["micro_batch"] = micro;
  t["dtype"] = to_string(dtype);
  if (reduce) t["gradient_reduce_dtype"] = to_string(*reduce);
  if (!fp8.empty()) t["fp8"] = fp8;
  if (!fp8.empty() && r.has("--fp8-param-gather")) t["fp8_param_gather"] = true;
  t["optimizer"] = "adam";
  t["checkpointing"] = to_string(ckpt);
  if (recompute_layers > 0) t["recompute_num_layers"] = recompute_layers;
  auto& p = doc["parallelism"];
  p["data"] = {{"size", g.data}};
  if (zero > 0) p["data"]["zero"] = zero;
  p["tensor"] =
      tp > 1 ? nlohmann::ordered_json{{"mode", "megatron"}, {"size", tp}} : nlohmann::ordered_json{{"mode", "none"}};
  if (sequence_parallel) p["sequence_parallel"] = true;
  p["pipeline"] = {{"stages", pp}, {"schedule", g.interleaved ? "interleaved" : "1f1b"}, {"chunks", g.chunks}};
  if (first_layers > 0) p["pipeline"]["first_stage_layers"] = first_layers;
  if (last_layers > 0) p["pipeline"]["last_stage_layers"] = last_layers;
  if (embedding_counted) p["pipeline"]["embedding_in_split"] = true;
  if (loss_counted) p["pipeline"]["loss_in_split"] = true;
  if (moe.enabled()) {
    p["expert"] = {{"size", g.expert}};
    if (folded) p["expert"]["tensor"] = 1;
    if (dispatcher == "allgather") p["expert"]["dispatcher"] = "all_gather";
  }
  if (cp > 1)
    p["context"] = {{"size", cp},
                    {"comm", cp_comm == "a2a"         ? "all_to_all"
                             : cp_comm == "allgather" ? "all_gather"
                                                      : "p2p"}};
}

void Translator::optimizations_and_placement(nlohmann::ordered_json& doc) {
  auto& opt = doc["optimizations"];
  opt = nlohmann::ordered_json::object();
  if (overlap_tp) opt["overlap_all_reduce"] = true;
  if (overlap_grads) opt["overlap_gradient_sync"] = true;
  if (scatter_gather) opt["scatter_gather"] = true;
  if (overlap_params) opt["overlap_param_gather"] = true;
  if (overlap_tensor) opt["overlap_tensor_comm"] = true;
  if (r.has("--no-gradient-accumulation-fusion")) opt["gradient_accumulation_fusion"] = false;
  // Megatron-LM numbers ranks tensor first, then expert and data, pipeline last (order tp-cp-ep-dp-pp);
  // --use-tp-pp-dp-mapping puts the pipeline before data.
  std::vector<std::string> order;
  if (tp > 1) order.emplace_back("tensor");
  if (cp > 1) order.emplace_back("context");
  if (moe.enabled()) order.emplace_back("expert");
  if (r.has("--use-tp-pp-dp-mapping")) {
    order.emplace_back("pipe");
    order.emplace_back("data");
  } else {
    order.emplace_back("data");
    order.emplace_back("pipe");
  }
  per_node = o.devices_per_node > 0 ? o.devices_per_node : world.per_node;
  doc["placement"] = {{"order", order}, {"devices_per_node", per_node}};
  doc["framework"] = {{"profile", framework}};
}

void Translator::describe(nlohmann::ordered_json& doc) {
  // The description: where every argument went.
  std::vector<std::string> read;
  for (const auto& [flag, arg] : s.modelled) read.push_back(arg.text());
  std::string d = "Imported by paratwin import megatron from a Megatron-LM command line. Modelled: " + join(read) +
                  ". World size " + n(world.ranks) + " (" + world.source + "): data-parallel size " + n(dp) + " = " +
                  n(world.ranks) + " / (" + n(tp) + " × " + n(pp) + (cp > 1 ? " × " + n(cp) : "") + ")" +
                  (moe.enabled() ? ", of which " + n(ep) + " expert-parallel" : "") + ". Vocabulary " + n(vocab) +
                  " padded to " + n(padded) + " (a multiple of --make-vocab-size-divisible-by " + n(divisible_by) +
                  " × tensor size " + n(tp) + ").";
  if (per_node > 0)
    d += " " + n(per_node) + " devices per node (" +
         (o.devices_per_node > 0 ? "machine " + o.machine : std::string("the launcher")) + ").";
  if (!assumed.empty()) d += " Assumed: " + join(assumed, "; ") + ".";
  if (!out.dropped.empty()) d += " Not expressible, left out (--approximate): " + join(out.dropped, "; ") + ".";
  if (!out.unknown.empty()) d += " Unknown, left out (--allow-unknown): " + join(out.unknown) + ".";
  if (!out.not_modelled.empty()) {
    std::vector<std::string> flags;
    for (const auto& a : out.not_modelled) flags.push_back(a.substr(0, a.find(' ')));
    d += " Not modelled (no effect on the cost model): " + join(flags) + ".";
  }
  doc["description"] = d;
}

MegatronImport Translator::run() {
  read_model();
  read_parallelism();
  read_moe();
  read_pipeline();
  read_tensor_split();
  read_batch();
  read_precision();
  read_sharding();
  read_memory_and_vocab();
  refuse_unknown_or_inexpressible();
  choose_framework();
  read_communication();
  // The workload file, in the order of the format's README.
  nlohmann::ordered_json doc;
  model_section(doc);
  training_and_parallelism(doc);
  optimizations_and_placement(doc);
  describe(doc);
  // Arguments are bytes: one that is not UTF-8 (listed in the description as unknown or left out) is
  // written with U+FFFD in place of the bytes JSON cannot hold.
  out.text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  try {
    out.workload = parse_workload(nlohmann::json::parse(out.text), "");
  } catch (const WorkloadError& e) {
    throw flag_error(e);
  }
  return std::move(out);
}

MegatronImport translate(const std::vector<std::string>& words, const MegatronImportOptions& o) {
  return Translator(words, o).run();
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& megatron_modelled_arguments() {
  static const std::vector<std::pair<std::string, std::string>> kArguments = {
      {"--num-layers, --hidden-size, --num-attention-heads", "model.layers, hidden, heads"},
      {"--ffn-hidden-size", "model.ffn_hidden (default 4 × hidden; with --swiglu 2/3 of it, a multiple of 64)"},
      {"--group-query-attention, --num-query-groups", "model.kv_heads (1 unless given)"},
      {"--swiglu", "model.mlp swiglu"},
      {"--context-parallel-size, --cp-comm-type p2p|a2a|allgather", "parallelism.context size, comm"},
      {"--use-mcore-models (not --use-legacy-models, --transformer-impl local)",
       "model.attention flash: Transformer Engine's fused attention when no backend is named"},
      {"--fp8-format (--fp8-e4m3, --fp8-hybrid), --fp8-recipe delayed|tensorwise", "training.fp8 delayed or current"},
      {"--fp8-param-gather", "training.fp8_param_gather"},
      {"--normalization RMSNorm", "model.norm rmsnorm"},
      {"--position-embedding-type (--use-rotary-position-embeddings)", "model.position rope, none or learned"},
      {"--disable-bias-linear", "model.bias false"},
      {"--add-qkv-bias", "model.qkv_bias true"},
      {"--untie-embeddings-and-output-weights", "model.tied_embeddings false"},
      {"--seq-length (--encoder-seq-length)", "model.seq_len; --max-position-embeddings is checked against it"},
      {"--vocab-size, --tokenizer-type, --tokenizer-model, --make-vocab-size-divisible-by",
       "model.vocab, padded to a multiple of divisible-by (128) × tensor size; GPT2BPETokenizer 50257, "
       "Llama2Tokenizer 32000, TikTokenizer 131072, HuggingFaceTokenizer of Llama 3 / Llama 2 / Mixtral 8x7B / GPT-2"},
      {"--attention-dropout", "model.attention_dropout (default 0.1)"},
      {"--use-flash-attn, --attention-backend", "model.attention: flash (flash, fused, auto) or unfused"},
      {"--num-experts, --moe-router-topk, --moe-layer-freq, --moe-expert-capacity-factor, --moe-ffn-hidden-size",
       "model.moe (no capacity factor: dropless; a layer pattern such as ([0]*3+[1]*58) as first_dense and every)"},
      {"--moe-shared-expert-intermediate-size", "model.moe.shared_ffn"},
      {"--multi-latent-attention, --q-lora-rank, --kv-lora-rank, --qk-head-dim, --qk-pos-emb-head-dim, --v-head-dim",
       "model.mla"},
      {"--micro-batch-size, --global-batch-size", "training.micro_batch, global_batch"},
      {"--fp16, --bf16, --grad-reduce-in-bf16, --accumulate-allreduce-grads-in-fp32",
       "training.dtype; bf16 gradients reduced in fp32 (training.gradient_reduce_dtype)"},
      {"--recompute-granularity, --recompute-method, --recompute-num-layers, --recompute-activations",
       "training.checkpointing full or selective; block with fewer layers than a chunk holds: "
       "training.recompute_num_layers"},
      {"--checkpoint-activations, --activations-checkpoint-method (2021)", "training.checkpointing full"},
      {"--tensor-model-parallel-size (--model-parallel-size)", "parallelism.tensor megatron, size"},
      {"--pipeline-model-parallel-size", "parallelism.pipeline.stages"},
      {"--decoder-first-pipeline-num-layers, --decoder-last-pipeline-num-layers",
       "parallelism.pipeline.first_stage_layers, last_stage_layers"},
      {"--account-for-embedding-in-pipeline-split, --account-for-loss-in-pipeline-split",
       "parallelism.pipeline.embedding_in_split, loss_in_split"},
      {"--num-layers-per-virtual-pipeline-stage, --num-virtual-stages-per-pipeline-rank",
       "parallelism.pipeline.chunks, schedule interleaved"},
      {"--expert-model-parallel-size", "parallelism.expert.size (taken out of the data-parallel size)"},
      {"--expert-tensor-parallel-size 1", "parallelism.expert.tensor 1 (expert.size = EP / tensor size)"},
      {"--moe-token-dispatcher-type alltoall|allgather", "parallelism.expert.dispatcher all_to_all|all_gather"},
      {"--sequence-parallel", "parallelism.sequence_parallel"},
      {"--use-distributed-optimizer", "parallelism.data.zero 1"},
      {"--overlap-grad-reduce, --DDP-impl torch", "optimizations.overlap_gradient_sync"},
      {"--overlap-param-gather (with --use-distributed-optimizer)", "optimizations.overlap_param_gather"},
      {"--tp-comm-overlap (with --sequence-parallel)", "optimizations.overlap_tensor_comm"},
      {"--no-async-tensor-model-parallel-allreduce", "optimizations.overlap_all_reduce off"},
      {"--no-scatter-gather-tensors-in-pipeline", "optimizations.scatter_gather off"},
      {"--no-gradient-accumulation-fusion", "optimizations.gradient_accumulation_fusion false"},
      {"--use-megatron-fsdp, --data-parallel-sharding-strategy",
       "framework megatron-fsdp, parallelism.data.zero 1-3 (optim_grads_params: 3)"},
      {"--use-tp-pp-dp-mapping", "placement.order tensor, pipe, data"},
      {"torchrun --nproc_per_node, --nnodes", "the world size: data.size = world / (tensor × pipeline)"},
  };
  return kArguments;
}

}  // namespace paratwin::importers
