//===- attnc.cpp - The attnc ahead-of-time command-line tool --------------===//
//
//   attnc layout | import | compile | explain <config.json> [options]
//   attnc --version, attnc --help, attnc <command> --help
// (each command's usage string below lists its flags)
//
// Exit status: 0 success, 2 bad input (usage, config, request), 1 internal
// failure. Every error is one line naming the field and the rule.
//
//===----------------------------------------------------------------------===//
#include "attnc/Dialect/Attn/LayerBuilder.h"
#include "attnc/Plan/KernelLimits.h"
#include "attnc/Plan/Layout.h"
#include "attnc/Model/ModelConfig.h"

#include "attnc/Jit/ModelCompiler.h"
#include "attnc/Runtime/NvrtcCompiler.h"
#include "Explain.h"
#include "attnc/Support/FileUtil.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

// Each command's usage lists every flag it accepts; the same flag is spelled
// the same in every command. The top-level help lists every command.
const char *kLayoutUsage =
    "usage: attnc layout <config.json> [--tp N] [--rank R] [--json]\n"
    "  fused QKV(G) segments and tensor-parallel shards of each layer kind\n"
    "  (an MLA kind: its latent cache and each rank's query heads);\n"
    "  --tp N (>= 1) adds every rank's shard, --rank R (0 <= R < N) one\n"
    "  rank's; --json prints the same as JSON\n";
const char *kImportUsage =
    "usage: attnc import <config.json> [--tp N --rank R] [--dtype bf16|fp16]\n"
    "                    [--kv-dtype bf16|fp16|fp8] [--block-size N]\n"
    "                    [--emit=layer|kernel|spec] [--arch sm_90a] [-o FILE]\n"
    "                    [--json]\n"
    "  the layers in the attn dialect, one function per layer kind;\n"
    "  --emit=kernel runs attnc-pipeline and prints the kernel form;\n"
    "  --emit=spec prints the imported config as an attnc spec;\n"
    "  --block-size is a power of two in [1, 1024] (default 16); --json\n"
    "  prints a summary (and the IR, unless -o names a file) as JSON\n";
const char *kCompileUsage =
    "usage: attnc compile <config.json> -o DIR [--arch sm_90a] [--tp N --rank R]\n"
    "                     [--dtype bf16|fp16] [--kv-dtype bf16|fp16|fp8]\n"
    "                     [--block-size N] [--json]\n"
    "  ahead-of-time compile: IR per stage, .cu, .ptx and .cubin per kernel,\n"
    "  manifest.json; a loadable model bundle. DIR is new, empty, or an\n"
    "  earlier bundle (whose files are replaced); --json prints the summary\n"
    "  as JSON\n";
const char *kExplainUsage =
    "usage: attnc explain <config.json> [--batch B] [--context L] [--prefill]\n"
    "                     [--bandwidth TB/s] [--flops TFLOP/s] [--arch sm_90a]\n"
    "                     [--tp N --rank R] [--dtype bf16|fp16]\n"
    "                     [--kv-dtype bf16|fp16|fp8] [--block-size N]\n"
    "                     [--no-compile] [--json]\n"
    "  per layer kind its features (present and absent) and per kernel its\n"
    "  plan (form, tiles, stages, split-KV rule and count), launch, shared\n"
    "  memory, registers and stack (from the compiled cubin), bytes and\n"
    "  FLOPs per token, and the floor time of a decode step of B sequences\n"
    "  of L keys (default B 64, L 8192) or, with --prefill, of the causal\n"
    "  prefill of B sequences of L tokens, at --bandwidth TB/s (default\n"
    "  4.25) and --flops TFLOP/s (default 780: an H200's measured copy\n"
    "  bandwidth and bf16 matmul rate); --no-compile skips NVRTC (no\n"
    "  registers); --json prints the same as one JSON document\n";
const char *kVersionUsage =
    "usage: attnc --version [--json]\n"
    "  the attnc version, the MLIR/LLVM it was built with and the NVRTC it\n"
    "  loads (or why none loads)\n";

/// The commands, in the order the help lists them.
struct Command {
  const char *name;
  const char *summary;
  const char *usage;
};
const Command kCommands[] = {
    {"layout", "fused QKV(G) segments and tensor-parallel shards",
     kLayoutUsage},
    {"import", "the layers in the attn dialect (or the kernel form)",
     kImportUsage},
    {"compile", "ahead-of-time compile into a loadable model bundle",
     kCompileUsage},
    {"explain", "plan, resources, bytes, FLOPs and floor time per kernel",
     kExplainUsage},
};

std::string topLevelUsage() {
  std::string text = "usage: attnc <command> <config.json> [options]\n"
                     "       attnc <command> --help | attnc help <command>\n"
                     "       attnc --version [--json] | attnc --help\n"
                     "\ncommands:\n";
  for (const Command &c : kCommands) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-9s %s\n", c.name, c.summary);
    text += line;
  }
  text += "\nflags shared by commands are spelled the same in each: --tp N, "
          "--rank R,\n--dtype, --kv-dtype, --block-size N, --arch, -o, --json, "
          "--help (-h)\n"
          "\nexit status: 0 ok, 2 bad input (the message names the field), "
          "1 internal error\n";
  return text;
}

/// --json: stdout carries exactly one JSON document, a summary or the error.
bool gJson = false;

/// Reports errors: each message as one "attnc: error:" line on stderr and,
/// with --json, all of them as one document on stdout. `field` and `rule`
/// (when known) go into the JSON as they are.
struct ErrorItem {
  std::string message, field, rule;
};
int failAll(int status, const std::vector<ErrorItem> &errors) {
  nlohmann::json list = nlohmann::json::array();
  for (const ErrorItem &error : errors) {
    std::fprintf(stderr, "attnc: error: %s\n", error.message.c_str());
    nlohmann::json item = {{"message", error.message}};
    if (!error.field.empty())
      item["field"] = error.field;
    if (!error.rule.empty())
      item["rule"] = error.rule;
    list.push_back(item);
  }
  if (gJson)
    std::printf("%s\n", nlohmann::json({{"ok", false},
                                        {"exit_status", status},
                                        {"errors", list}})
                            .dump(2)
                            .c_str());
  return status;
}

int fail(int status, const std::string &message, const std::string &field = "",
         const std::string &rule = "") {
  return failAll(status, {{message, field, rule}});
}

/// A config error as one line: "<path>: <field>: <rule>" (the field is left
/// out when it is the path itself, as for an unreadable file).
int configError(const std::string &path, const attnc::Status &error) {
  if (error.field == path)
    return fail(kExitBadInput, path + ": " + error.rule, path, error.rule);
  return fail(kExitBadInput, path + ": " + error.message(), error.field,
              error.rule);
}

/// Prints a success summary (--json).
int printJson(const nlohmann::json &summary) {
  nlohmann::json document = {{"ok", true}};
  document.update(summary);
  std::printf("%s\n", document.dump(2).c_str());
  return kExitOk;
}

/// Parsed command line: positional arguments and --flag values.
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  std::map<std::string, bool> switches;
  bool help = false; ///< --help or -h: print the command's usage, exit 0
};

/// Parses `argv` against the flags a command accepts. Value flags take the
/// next argument or `--flag=value`.
std::optional<std::string> parseArgs(int argc, char **argv, int first,
                                     const std::vector<std::string> &valueFlags,
                                     const std::vector<std::string> &switches,
                                     Args &args) {
  auto contains = [](const std::vector<std::string> &list,
                     const std::string &x) {
    for (const std::string &y : list)
      if (x == y)
        return true;
    return false;
  };
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-') {
      args.positional.push_back(arg);
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      args.help = true;
      continue;
    }
    std::string name = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    // A flag given twice is an error: the first or the last silently
    // winning hides a mistake in a script.
    if (args.switches.count(name) || args.values.count(name))
      return name + ": given more than once";
    if (contains(switches, name) && !hasValue) {
      args.switches[name] = true;
    } else if (contains(valueFlags, name)) {
      if (!hasValue) {
        if (i + 1 >= argc)
          return name + ": needs a value";
        value = argv[++i];
      }
      args.values[name] = value;
    } else {
      return name + ": unknown option";
    }
  }
  return std::nullopt;
}

/// Reads an integer option; the error names the flag.
std::optional<std::string> intOption(const Args &args, const std::string &name,
                                     int64_t &out) {
  auto it = args.values.find(name);
  if (it == args.values.end())
    return std::nullopt;
  const std::string &text = it->second;
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    return name + ": must be an integer, got '" + text + "'";
  out = value;
  return std::nullopt;
}

/// --tp (>= 1) and --rank (in [0, tp), only with --tp); the error names the
/// flag. `rank` stays -1 without --rank.
std::optional<std::string> parallelOptions(const Args &args, int64_t &tp,
                                           int64_t &rank) {
  if (auto e = intOption(args, "--tp", tp))
    return e;
  if (auto e = intOption(args, "--rank", rank))
    return e;
  if (tp < 1)
    return "--tp: must be >= 1, got " + std::to_string(tp);
  if (args.values.count("--rank")) {
    if (!args.values.count("--tp"))
      return std::string("--rank: needs --tp");
    if (rank < 0 || rank >= tp)
      return "--rank: must be in [0, " + std::to_string(tp) + ") for --tp " +
             std::to_string(tp) + ", got " + std::to_string(rank);
  }
  return std::nullopt;
}

std::string joinLayers(const std::vector<int64_t> &layers) {
  std::string text;
  for (size_t i = 0; i < layers.size(); ++i)
    text += (i ? "," : "") + std::to_string(layers[i]);
  return text;
}

nlohmann::json segmentsJson(const attnc::FusedLayout &layout) {
  nlohmann::json segments = nlohmann::json::array();
  for (const attnc::Segment &s : layout.segments)
    segments.push_back({{"segment", attnc::segmentKindName(s.kind)},
                        {"offset", s.offset},
                        {"num_heads", s.num_heads},
                        {"head_size", s.head_size},
                        {"head_stride", s.head_stride},
                        {"size", s.size()}});
  return segments;
}

nlohmann::json copiesJson(const std::vector<attnc::RowCopy> &copies) {
  nlohmann::json list = nlohmann::json::array();
  for (const attnc::RowCopy &c : copies)
    list.push_back({{"segment", attnc::segmentKindName(c.segment)},
                    {"source", attnc::checkpointTensorName(c.source)},
                    {"source_row", c.source_row},
                    {"dest_row", c.dest_row},
                    {"rows", c.rows}});
  return list;
}

void printSegments(std::string &out, const attnc::FusedLayout &layout,
                   const char *indent) {
  char line[160];
  std::snprintf(line, sizeof line, "%s%-8s %8s %6s %10s %12s %8s\n", indent,
                "segment", "offset", "heads", "head_size", "head_stride",
                "size");
  out += line;
  for (const attnc::Segment &s : layout.segments) {
    std::snprintf(line, sizeof line,
                  "%s%-8s %8lld %6lld %10lld %12lld %8lld\n", indent,
                  attnc::segmentKindName(s.kind), (long long)s.offset,
                  (long long)s.num_heads, (long long)s.head_size,
                  (long long)s.head_stride, (long long)s.size());
    out += line;
  }
}

void printCopies(std::string &out, const char *title,
                 const std::vector<attnc::RowCopy> &copies) {
  char line[160];
  std::snprintf(line, sizeof line, "      %s:\n", title);
  out += line;
  std::snprintf(line, sizeof line, "        %-8s %-8s %10s %8s %6s\n",
                "segment", "source", "source_row", "dest_row", "rows");
  out += line;
  for (const attnc::RowCopy &c : copies) {
    std::snprintf(line, sizeof line, "        %-8s %-8s %10lld %8lld %6lld\n",
                  attnc::segmentKindName(c.segment),
                  attnc::checkpointTensorName(c.source),
                  (long long)c.source_row, (long long)c.dest_row,
                  (long long)c.rows);
    out += line;
  }
}

/// Bytes of one element of the activation dtype ("bf16", "fp16", "fp32").
int64_t dtypeBytes(const std::string &dtype) {
  return dtype == "fp32" ? 4 : 2;
}

/// An MLA kind's layout: its latent cache (one row per token, shared by
/// every query head, never split by tensor parallelism) and the shapes its
/// kernels see; with --tp, each rank's query heads.
std::optional<std::string>
printLatentLayout(const std::string &path, const attnc::ModelConfig &config,
                  const attnc::LayerKind &kind, int64_t tp,
                  const std::vector<int64_t> &ranks, bool showRanks,
                  std::string &text, nlohmann::json &json) {
  const attnc::MlaConfig &mla = *kind.mla;
  const attnc::HeadShape &h = kind.heads;
  attnc::Result<attnc::LatentCacheLayout> latent =
      attnc::computeLatentCacheLayout(mla.kv_lora_rank, kind.rope.rotary_dim,
                                      mla.block_size);
  if (!latent)
    return path + ": " + kind.name + ": " + latent.status().message();
  const int64_t element = dtypeBytes(config.dtype);
  const int64_t rowBytes = latent->bytesPerToken(element);
  const int64_t fp8RowBytes = latent->bytesPerToken(1);
  const int64_t nope = kind.rope.rotary_offset;
  nlohmann::json kindJson = {
      {"name", kind.name},
      {"layers", kind.layers},
      {"mla", true},
      {"num_q_heads", h.num_q_heads},
      {"kv_lora_rank", latent->kv_lora_rank},
      {"qk_nope_head_dim", nope},
      {"qk_rope_head_dim", latent->rope_head_dim},
      {"v_head_dim", h.v_head_dim},
      {"latent_cache",
       {{"shape", {"num_blocks", latent->block_size, latent->row_width}},
        {"dtype", config.dtype},
        {"bytes_per_token", rowBytes},
        {"bytes_per_token_fp8", fp8RowBytes},
        {"bytes_per_block", rowBytes * latent->block_size},
        {"c_kv", {0, latent->k_pe_offset}},
        {"k_pe", {latent->k_pe_offset, latent->row_width}},
        {"value", {0, latent->value_width}}}}};
  text += "\nlayer kind " + kind.name + ": " +
          std::to_string(kind.layers.size()) + " layers [" +
          joinLayers(kind.layers) + "]\n";
  char line[320];
  std::snprintf(line, sizeof line,
                "  MLA: num_q_heads %lld  kv_lora_rank %lld  qk_nope_head_dim "
                "%lld  qk_rope_head_dim %lld  v_head_dim %lld\n",
                (long long)h.num_q_heads, (long long)latent->kv_lora_rank,
                (long long)nope, (long long)latent->rope_head_dim,
                (long long)h.v_head_dim);
  text += line;
  std::snprintf(line, sizeof line,
                "  latent cache [num_blocks, %lld, %lld] %s: %lld B per token "
                "per layer (fp8: %lld B), %lld B per block\n",
                (long long)latent->block_size, (long long)latent->row_width,
                config.dtype.c_str(), (long long)rowBytes,
                (long long)fp8RowBytes,
                (long long)(rowBytes * latent->block_size));
  text += line;
  std::snprintf(line, sizeof line,
                "    c_kv columns [0, %lld)  k_pe columns [%lld, %lld)  V = "
                "columns [0, %lld) of the same rows (no second cache)\n",
                (long long)latent->k_pe_offset,
                (long long)latent->k_pe_offset, (long long)latent->row_width,
                (long long)latent->value_width);
  text += line;
  std::snprintf(line, sizeof line,
                "  absorbed decode: query [T, %lld, %lld] -> output [T, %lld, "
                "%lld]; decompressed prefill: q/k [T, %lld, %lld], v [T, "
                "%lld, %lld]\n",
                (long long)h.num_q_heads, (long long)latent->row_width,
                (long long)h.num_q_heads, (long long)latent->value_width,
                (long long)h.num_q_heads, (long long)h.qk_head_dim,
                (long long)h.num_q_heads, (long long)h.v_head_dim);
  text += line;
  if (showRanks) {
    nlohmann::json rankList = nlohmann::json::array();
    for (int64_t r : ranks) {
      auto shard =
          attnc::computeRankShard(h, tp, r, attnc::CheckpointForm::Separate);
      if (!shard)
        return path + ": " + kind.name + ": " + shard.status().message();
      const int64_t local = shard->local.shape.num_q_heads;
      rankList.push_back({{"rank", r},
                          {"num_q_heads", local},
                          {"first_q_head", shard->first_q_head},
                          {"latent_bytes_per_token", rowBytes}});
      std::snprintf(line, sizeof line,
                    "\n  tp %lld rank %lld: num_q_heads %lld (from head %lld); "
                    "the latent cache is not split: %lld B per token per "
                    "layer on every rank\n",
                    (long long)tp, (long long)r, (long long)local,
                    (long long)shard->first_q_head, (long long)rowBytes);
      text += line;
    }
    kindJson["tensor_parallel"] = {{"tp", tp}, {"ranks", rankList}};
  }
  json["layer_kinds"].push_back(kindJson);
  return std::nullopt;
}

int runLayout(int argc, char **argv) {
  Args args;
  if (auto error = parseArgs(argc, argv, 2, {"--tp", "--rank"}, {"--json"},
                             args))
    return fail(kExitBadInput, *error);
  if (args.help) {
    std::fputs(kLayoutUsage, stdout);
    return kExitOk;
  }
  if (args.positional.size() != 1)
    return fail(kExitBadInput, "layout: expected one config file");
  const std::string &path = args.positional[0];
  int64_t tp = 1, rank = -1;
  if (auto e = parallelOptions(args, tp, rank))
    return fail(kExitBadInput, *e);

  attnc::Result<attnc::ModelConfig> config = attnc::importModelConfigFile(path);
  if (!config)
    return configError(path, config.status());
  if (attnc::Status split = attnc::checkTensorParallel(*config, tp);
      !split.ok())
    return fail(kExitBadInput, path + ": --" + split.message());

  std::vector<int64_t> ranks;
  if (rank >= 0 || args.values.count("--rank"))
    ranks.push_back(rank);
  else
    for (int64_t r = 0; r < tp; ++r)
      ranks.push_back(r);

  nlohmann::json json = {{"config", path},
                         {"model_type", config->model_type},
                         {"layer_kinds", nlohmann::json::array()}};
  std::string text = "model " + config->model_type + " (" + path + ")\n";
  for (const attnc::LayerKind &kind : config->kinds) {
    if (kind.mla) {
      if (auto e = printLatentLayout(path, *config, kind, tp, ranks,
                                     args.values.count("--tp") != 0, text,
                                     json))
        return fail(kExitBadInput, *e);
      continue;
    }
    attnc::Result<attnc::FusedLayout> layout =
        attnc::computeFusedLayout(kind.heads);
    if (!layout)
      return fail(kExitBadInput,
                  path + ": " + kind.name + ": " + layout.status().message());
    const attnc::HeadShape &h = kind.heads;
    nlohmann::json kindJson = {
        {"name", kind.name},
        {"layers", kind.layers},
        {"num_q_heads", h.num_q_heads},
        {"num_kv_heads", h.num_kv_heads},
        {"qk_head_dim", h.qk_head_dim},
        {"v_head_dim", h.v_head_dim},
        {"gate_layout", attnc::gateLayoutName(h.gate)},
        {"fused_width", layout->width},
        {"segments", segmentsJson(*layout)}};
    text += "\nlayer kind " + kind.name + ": " +
            std::to_string(kind.layers.size()) + " layers [" +
            joinLayers(kind.layers) + "]\n";
    char line[256];
    std::snprintf(line, sizeof line,
                  "  num_q_heads %lld  num_kv_heads %lld  qk_head_dim %lld  "
                  "v_head_dim %lld  gate %s  fused_width %lld\n",
                  (long long)h.num_q_heads, (long long)h.num_kv_heads,
                  (long long)h.qk_head_dim, (long long)h.v_head_dim,
                  attnc::gateLayoutName(h.gate), (long long)layout->width);
    text += line;
    printSegments(text, *layout, "  ");

    if (args.values.count("--tp")) {
      nlohmann::json rankList = nlohmann::json::array();
      for (int64_t r : ranks) {
        auto separate = attnc::computeRankShard(
            h, tp, r, attnc::CheckpointForm::Separate);
        if (!separate)
          return fail(kExitBadInput, path + ": " + kind.name + ": " +
                                         separate.status().message());
        auto fused =
            attnc::computeRankShard(h, tp, r, attnc::CheckpointForm::Fused);
        if (!fused)
          return fail(kExitBadInput, path + ": " + kind.name + ": " +
                                         fused.status().message());
        const attnc::HeadShape &local = separate->local.shape;
        rankList.push_back(
            {{"rank", r},
             {"kv_replicated", separate->kv_replicated},
             {"first_q_head", separate->first_q_head},
             {"first_kv_head", separate->first_kv_head},
             {"num_q_heads", local.num_q_heads},
             {"num_kv_heads", local.num_kv_heads},
             {"fused_width", separate->local.width},
             {"segments", segmentsJson(separate->local)},
             {"copies_from_separate", copiesJson(separate->copies)},
             {"copies_from_fused", copiesJson(fused->copies)}});
        std::snprintf(line, sizeof line,
                      "\n  tp %lld rank %lld: num_q_heads %lld (from head "
                      "%lld)  num_kv_heads %lld (from head %lld%s)  "
                      "fused_width %lld\n",
                      (long long)tp, (long long)r,
                      (long long)local.num_q_heads,
                      (long long)separate->first_q_head,
                      (long long)local.num_kv_heads,
                      (long long)separate->first_kv_head,
                      separate->kv_replicated ? ", replicated" : "",
                      (long long)separate->local.width);
        text += line;
        printSegments(text, separate->local, "    ");
        printCopies(text, "rows from separate q/k/v(/gate) tensors",
                    separate->copies);
        printCopies(text, "rows from the fused checkpoint tensor",
                    fused->copies);
      }
      kindJson["tensor_parallel"] = {{"tp", tp}, {"ranks", rankList}};
    }
    json["layer_kinds"].push_back(kindJson);
  }
  if (gJson)
    return printJson(json);
  else
    std::fputs(text.c_str(), stdout);
  return kExitOk;
}

/// The layer options shared by import and compile (--tp, --rank,
/// --block-size, --dtype, --kv-dtype); the error names the flag.
std::optional<std::string> layerOptions(const Args &args,
                                        attnc::LayerBuildOptions &options) {
  int64_t rank = -1;
  if (auto e = parallelOptions(args, options.tp, rank))
    return e;
  if (rank >= 0)
    options.rank = rank;
  if (auto e = intOption(args, "--block-size", options.block_size))
    return e;
  if (attnc::Status s = attnc::plan::checkBlockSize(options.block_size);
      !s.ok())
    return "--block-size: " + s.rule;
  if (auto it = args.values.find("--dtype"); it != args.values.end()) {
    if (it->second != "bf16" && it->second != "fp16")
      return "--dtype: must be bf16 or fp16, got '" + it->second + "'";
    options.dtype = it->second;
  }
  if (auto it = args.values.find("--kv-dtype"); it != args.values.end()) {
    if (it->second == "bf16")
      options.kv_dtype = attnc::KvCacheDtype::BF16;
    else if (it->second == "fp16")
      options.kv_dtype = attnc::KvCacheDtype::FP16;
    else if (it->second == "fp8")
      options.kv_dtype = attnc::KvCacheDtype::FP8E4M3;
    else
      return "--kv-dtype: must be bf16, fp16 or fp8, got '" + it->second + "'";
  }
  return std::nullopt;
}

const std::vector<std::string> kLayerFlags = {"--tp", "--rank", "--dtype",
                                              "--kv-dtype", "--block-size"};

std::vector<std::string> withLayerFlags(std::vector<std::string> flags) {
  flags.insert(flags.end(), kLayerFlags.begin(), kLayerFlags.end());
  return flags;
}

int runImport(int argc, char **argv) {
  Args args;
  if (auto error = parseArgs(argc, argv, 2,
                             withLayerFlags({"--emit", "--arch", "-o"}),
                             {"--json"}, args))
    return fail(kExitBadInput, *error);
  if (args.help) {
    std::fputs(kImportUsage, stdout);
    return kExitOk;
  }
  if (args.positional.size() != 1)
    return fail(kExitBadInput, "import: expected one config file");
  const std::string &path = args.positional[0];
  attnc::LayerBuildOptions options;
  if (auto e = layerOptions(args, options))
    return fail(kExitBadInput, *e);

  attnc::Result<attnc::ModelConfig> config = attnc::importModelConfigFile(path);
  if (!config)
    return configError(path, config.status());

  std::string emit = "layer";
  if (auto it = args.values.find("--emit"); it != args.values.end())
    emit = it->second;
  if (emit != "layer" && emit != "kernel" && emit != "spec")
    return fail(kExitBadInput,
                "--emit: must be layer, kernel or spec, got '" + emit + "'");
  if (args.values.count("--arch") && emit != "kernel")
    return fail(kExitBadInput, "--arch: only meaningful with --emit=kernel");

  if (attnc::Status split = attnc::checkTensorParallel(*config, options.tp);
      !split.ok())
    return fail(kExitBadInput, path + ": --" + split.message());
  if (emit == "spec") {
    // What the importer read, every field spelled out (the whole model: the
    // spec has no tensor-parallel form).
    if (args.values.count("-o") || gJson)
      return fail(kExitBadInput, "--emit=spec: prints to stdout; no -o or --json");
    std::fputs(attnc::toSpecJson(*config).c_str(), stdout);
    return kExitOk;
  }
  mlir::MLIRContext context;
  auto module = attnc::buildModelModule(context, *config, options);
  if (!module)
    return fail(kExitBadInput, path + ": " + module.status().message());

  if (emit == "kernel") {
    attnc::PipelineOptions pipeline;
    if (auto it = args.values.find("--arch"); it != args.values.end())
      pipeline.arch = it->second;
    // Diagnostics become one "attnc: error:" line each; a pipeline failure on
    // a valid config is a request the target cannot serve (exit 2).
    std::vector<std::string> diagnostics;
    mlir::ScopedDiagnosticHandler handler(
        &context, [&](mlir::Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error)
            diagnostics.push_back(diagnostic.str());
          return mlir::success();
        });
    mlir::PassManager pm(&context);
    attnc::buildAttncPipeline(pm, pipeline);
    if (mlir::failed(pm.run(**module))) {
      if (diagnostics.empty())
        return fail(kExitInternal, path + ": attnc-pipeline failed");
      std::vector<ErrorItem> errors;
      for (const std::string &message : diagnostics)
        errors.push_back({path + ": " + message, "", ""});
      return failAll(kExitBadInput, errors);
    }
  }

  std::string outPath = "-";
  if (auto it = args.values.find("-o"); it != args.values.end())
    outPath = it->second;
  if (outPath.empty())
    return fail(kExitBadInput, "-o: must be a file path or -, got ''", "-o");
  std::string text;
  llvm::raw_string_ostream textStream(text);
  (*module)->print(textStream);
  text += "\n";
  // With --json and no -o FILE the IR goes into the summary.
  if (outPath != "-" || !gJson) {
    std::error_code ec;
    llvm::raw_fd_ostream os(outPath, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return fail(kExitBadInput,
                  "-o: cannot write '" + outPath + "': " + ec.message(), "-o");
    os << text;
    os.close();
    if (os.has_error())
      return fail(kExitBadInput, "-o: cannot write '" + outPath +
                                     "': " + os.error().message(),
                  "-o");
  }
  if (!gJson)
    return kExitOk;
  nlohmann::json kinds = nlohmann::json::array();
  for (const attnc::LayerKind &kind : config->kinds)
    kinds.push_back({{"name", kind.name}, {"layers", kind.layers}});
  nlohmann::json summary = {{"config", path},
                            {"model_type", config->model_type},
                            {"emit", emit},
                            {"layer_kinds", kinds}};
  if (outPath == "-")
    summary["module"] = text;
  else
    summary["output"] = outPath;
  return printJson(summary);
}

/// Lines of a text (a final line without newline counts).
size_t countLines(const std::string &text) {
  size_t lines = std::count(text.begin(), text.end(), '\n');
  return lines + (!text.empty() && text.back() != '\n');
}

/// What compile may write into `dir`, checked before any work: a new or
/// empty folder, or an earlier bundle (a manifest.json of the bundle
/// format), which it can create and write into. `replaceBundle` is set for
/// an earlier bundle, whose files are removed once the new model compiled.
std::optional<std::string> checkOutputFolder(const std::string &dir,
                                             bool &replaceBundle) {
  namespace fs = std::filesystem;
  namespace fu = attnc::file_util;
  replaceBundle = false;
  if (dir.empty())
    return std::string("-o: must be a folder path, got ''");
  std::error_code ec;
  fs::file_status status = fs::status(dir, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status))
      return "-o: '" + dir + "' exists and is not a folder";
    if (!fs::is_empty(dir, ec)) {
      if (ec)
        return "-o: cannot list '" + dir + "': " + ec.message();
      if (!attnc::jit::isModelBundle(dir))
        return "-o: '" + dir +
               "' is not empty and holds no attnc model bundle "
               "(manifest.json of format attnc-model-bundle); give a new or "
               "empty folder";
      replaceBundle = true;
    }
  }
  if (attnc::Status s = fu::makeDirectories(dir); !s.ok())
    return "-o: cannot create '" + dir + "': " + s.rule;
  // A probe file shows the folder is writable (a read-only mount, /proc)
  // before minutes of NVRTC.
  const std::string probe = dir + "/.attnc-write-probe";
  if (attnc::Status s = fu::writeFileAtomic(probe, "probe\n"); !s.ok())
    return "-o: cannot write into '" + dir + "': " + s.rule;
  fs::remove(probe, ec);
  return std::nullopt;
}

/// Removes what an earlier bundle in `dir` holds that compile writes
/// (manifest.json, ir/, kernels/): no stale kernel of another model stays
/// beside the new ones. Other files in the folder are left alone.
std::optional<std::string> removeEarlierBundle(const std::string &dir) {
  namespace fs = std::filesystem;
  for (const char *entry : {"manifest.json", "ir", "kernels"}) {
    std::error_code ec;
    // remove_all removes a symlink itself, never what it points to.
    fs::remove_all(fs::path(dir) / entry, ec);
    if (ec)
      return "-o: cannot remove the earlier bundle's " + std::string(entry) +
             " in '" + dir + "': " + ec.message();
  }
  return std::nullopt;
}

int runCompile(int argc, char **argv) {
  namespace fu = attnc::file_util;
  Args args;
  if (auto error = parseArgs(argc, argv, 2, withLayerFlags({"--arch", "-o"}),
                             {"--json"}, args))
    return fail(kExitBadInput, *error);
  if (args.help) {
    std::fputs(kCompileUsage, stdout);
    return kExitOk;
  }
  if (args.positional.size() != 1)
    return fail(kExitBadInput, "compile: expected one config file");
  const std::string &path = args.positional[0];
  auto out = args.values.find("-o");
  if (out == args.values.end())
    return fail(kExitBadInput, "-o: compile needs an output directory", "-o");
  const std::string dir = out->second;
  attnc::jit::ModelCompileOptions options;
  options.keep_stage_ir = true;
  if (auto e = layerOptions(args, options.layer))
    return fail(kExitBadInput, *e);
  if (auto it = args.values.find("--arch"); it != args.values.end())
    options.arch = it->second;
  if (attnc::Status s = attnc::runtime::validateArch(options.arch); !s.ok())
    return fail(kExitBadInput, "--arch: " + s.message(), "--arch", s.rule);

  std::fprintf(stderr, "attnc: reading %s\n", path.c_str());
  attnc::Result<attnc::ModelConfig> config = attnc::importModelConfigFile(path);
  if (!config)
    return configError(path, config.status());
  bool replaceBundle = false;
  if (auto e = checkOutputFolder(dir, replaceBundle))
    return fail(kExitBadInput, *e, "-o");

  attnc::runtime::ContextOptions contextOptions;
  contextOptions.archs = {options.arch};
  auto context = attnc::runtime::Context::create(contextOptions);
  if (!context)
    return fail(kExitInternal, context.status().message());
  std::fprintf(stderr,
               "attnc: compiling %zu layer kind(s) of %s for %s (pipeline, "
               "CUDA emission, NVRTC)\n",
               config->kinds.size(), config->model_type.c_str(),
               options.arch.c_str());
  // One line per kernel as its build ends: NVRTC takes seconds each.
  options.on_kernel_built = [](const attnc::jit::KernelBuildEvent &event) {
    std::fprintf(stderr, "attnc:   [%zu/%zu] %6.2f s  %s (%s)\n", event.done,
                 event.total, event.elapsed_ms / 1000.0, event.name.c_str(),
                 event.ok ? attnc::runtime::buildOutcomeName(event.outcome)
                          : "failed");
    std::fflush(stderr);
  };
  auto model = attnc::jit::compileModel(**context, *config, options);
  if (!model) {
    const attnc::Status &status = model.status();
    bool request = status.code() == attnc::StatusCode::InvalidArgument;
    return fail(request ? kExitBadInput : kExitInternal,
                path + ": " + status.message(), status.field, status.rule);
  }

  // The model bundle (loadable without NVRTC), then the inspection files.
  if (replaceBundle)
    if (auto e = removeEarlierBundle(dir))
      return fail(kExitInternal, *e, "-o");
  if (attnc::Status s = attnc::jit::writeModelBundle(*model, dir); !s.ok())
    return fail(kExitInternal, s.message());
  auto write = [&](const std::string &file, const std::string &text) {
    attnc::Status s = fu::writeFileAtomic(file, text);
    if (!s.ok())
      fail(kExitInternal, s.message());
    return s.ok();
  };
  if (!fu::makeDirectories(dir + "/ir").ok())
    return fail(kExitInternal, "cannot create " + dir + "/ir");
  for (size_t i = 0; i < model->stages.size(); ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "/ir/%02zu-%s.mlir", i,
                  model->stages[i].stage.c_str());
    if (!write(dir + name, model->stages[i].module))
      return kExitInternal;
  }
  nlohmann::json kernels = nlohmann::json::array();
  std::string table;
  char line[256];
  std::snprintf(line, sizeof line, "\n%-34s %8s %10s %10s %11s  %s\n",
                "kernel", "lines", "ptx bytes", "cubin", "compile ms", "cache");
  table += line;
  for (const attnc::jit::CompiledKernel &kernel : model->kernels) {
    std::string kernelDir = dir + "/kernels/" + kernel.name;
    const attnc::runtime::KernelBinary &binary = kernel.set->binaries().front();
    if (!write(kernelDir + "/" + kernel.name + ".mlir", kernel.kernel_ir + "\n") ||
        !write(kernelDir + "/" + kernel.name + ".ptx", binary.ptx))
      return kExitInternal;
    const char *outcome = attnc::runtime::buildOutcomeName(binary.report.outcome);
    std::snprintf(line, sizeof line, "%-34s %8zu %10zu %10zu %11.1f  %s\n",
                  kernel.name.c_str(), countLines(kernel.source),
                  binary.ptx.size(), binary.cubin.size(),
                  binary.report.compile_ms, outcome);
    table += line;
    kernels.push_back({{"name", kernel.name},
                       {"kind", kernel.kind},
                       {"layer", kernel.layer},
                       {"source_lines", countLines(kernel.source)},
                       {"ptx_bytes", binary.ptx.size()},
                       {"cubin_bytes", binary.cubin.size()},
                       {"compile_ms", binary.report.compile_ms},
                       {"cache", outcome},
                       {"folder", kernelDir}});
  }
  if (gJson)
    return printJson({{"config", path},
                      {"model_type", model->model_type},
                      {"arch", options.arch},
                      {"output", dir},
                      {"replaced_earlier_bundle", replaceBundle},
                      {"kernels", kernels}});
  std::fputs(table.c_str(), stdout);
  std::printf("\nwrote %s: manifest.json, ir/ (the module after each stage), "
              "kernels/<name>/ (.cu, .mlir, .ptx, kernels.%s.cubin and its "
              "bundle manifest)\n",
              dir.c_str(), options.arch.c_str());
  return kExitOk;
}

/// A positive finite number option (TB/s, TFLOP/s); the error names the
/// flag.
std::optional<std::string> rateOption(const Args &args, const std::string &name,
                                      double &out) {
  auto it = args.values.find(name);
  if (it == args.values.end())
    return std::nullopt;
  const std::string &text = it->second;
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value) ||
      value <= 0)
    return name + ": must be a positive number, got '" + text + "'";
  out = value;
  return std::nullopt;
}

int runExplain(int argc, char **argv) {
  Args args;
  if (auto error = parseArgs(
          argc, argv, 2,
          withLayerFlags({"--batch", "--context", "--bandwidth", "--flops",
                          "--arch"}),
          {"--json", "--prefill", "--no-compile"}, args))
    return fail(kExitBadInput, *error);
  if (args.help) {
    std::fputs(kExplainUsage, stdout);
    return kExitOk;
  }
  if (args.positional.size() != 1)
    return fail(kExitBadInput, "explain: expected one config file");
  const std::string &path = args.positional[0];
  attnc::tools::ExplainOptions options;
  options.config_path = path;
  if (auto e = layerOptions(args, options.layer))
    return fail(kExitBadInput, *e);
  if (auto it = args.values.find("--arch"); it != args.values.end())
    options.arch = it->second;
  if (attnc::Status s = attnc::runtime::validateArch(options.arch); !s.ok())
    return fail(kExitBadInput, "--arch: " + s.message(), "--arch", s.rule);
  options.workload.phase = args.switches.count("--prefill")
                               ? attnc::plan::Phase::Prefill
                               : attnc::plan::Phase::Decode;
  options.workload.batch = 64;
  options.workload.context = 8192;
  if (auto e = intOption(args, "--batch", options.workload.batch))
    return fail(kExitBadInput, *e, "--batch");
  if (auto e = intOption(args, "--context", options.workload.context))
    return fail(kExitBadInput, *e, "--context");
  if (attnc::Status s = attnc::plan::checkWorkload(options.workload); !s.ok())
    return fail(kExitBadInput, "--" + s.field + ": " + s.rule, "--" + s.field,
                s.rule);
  double bandwidth = options.machine.bytes_per_second / 1e12;
  double flops = options.machine.flops_per_second / 1e12;
  if (auto e = rateOption(args, "--bandwidth", bandwidth))
    return fail(kExitBadInput, *e, "--bandwidth");
  if (auto e = rateOption(args, "--flops", flops))
    return fail(kExitBadInput, *e, "--flops");
  options.machine.bytes_per_second = bandwidth * 1e12;
  options.machine.flops_per_second = flops * 1e12;
  options.default_machine =
      !args.values.count("--bandwidth") && !args.values.count("--flops");
  options.compile = !args.switches.count("--no-compile");

  attnc::Result<attnc::ModelConfig> config = attnc::importModelConfigFile(path);
  if (!config)
    return configError(path, config.status());
  auto document = attnc::tools::explainModel(*config, options);
  if (!document) {
    const attnc::Status &status = document.status();
    bool request = status.code() == attnc::StatusCode::InvalidArgument;
    return fail(request ? kExitBadInput : kExitInternal,
                path + ": " + status.message(), status.field, status.rule);
  }
  if (gJson)
    return printJson(*document);
  std::fputs(attnc::tools::explainTable(*document).c_str(), stdout);
  return kExitOk;
}

/// attnc --version: attnc, the MLIR/LLVM it was built with, the NVRTC it
/// loads.
int runVersion(int argc, char **argv) {
  Args args;
  if (auto error = parseArgs(argc, argv, 2, {}, {"--json"}, args))
    return fail(kExitBadInput, *error);
  if (args.help) {
    std::fputs(kVersionUsage, stdout);
    return kExitOk;
  }
  if (!args.positional.empty())
    return fail(kExitBadInput, "--version: takes no arguments, got '" +
                                   args.positional[0] + "'");
  nlohmann::json nvrtc;
  std::string nvrtcLine;
  auto library = attnc::runtime::NvrtcLibrary::load();
  if (library) {
    nvrtc = {{"available", true},
             {"version", (*library)->version().str()},
             {"path", (*library)->path()}};
    nvrtcLine = "NVRTC " + (*library)->version().str() + " (" +
                (*library)->path() + ")";
  } else {
    nvrtc = {{"available", false}, {"reason", library.status().rule}};
    nvrtcLine = "NVRTC not available: " + library.status().rule;
  }
  if (gJson)
    return printJson({{"attnc_version", ATTNC_VERSION},
                      {"runtime_version", attnc::runtime::attncVersion()},
                      {"llvm_version", LLVM_VERSION_STRING},
                      {"nvrtc", nvrtc}});
  std::printf("attnc %s\nbuilt with MLIR/LLVM %s\n%s\n", ATTNC_VERSION,
              LLVM_VERSION_STRING, nvrtcLine.c_str());
  return kExitOk;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return fail(kExitBadInput, "missing command\n" + topLevelUsage());
  std::string command = argv[1];
  // Set before any argument is parsed, so that a usage error is JSON too.
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]) == "--json")
      gJson = true;
  if (command == "--help" || command == "-h") {
    std::fputs(topLevelUsage().c_str(), stdout);
    return kExitOk;
  }
  if (command == "help") {
    if (argc == 2) {
      std::fputs(topLevelUsage().c_str(), stdout);
      return kExitOk;
    }
    for (const Command &c : kCommands)
      if (c.name == std::string(argv[2])) {
        std::fputs(c.usage, stdout);
        return kExitOk;
      }
    return fail(kExitBadInput, "help: unknown command '" +
                                   std::string(argv[2]) + "'\n" +
                                   topLevelUsage());
  }
  if (command == "--version")
    return runVersion(argc, argv);
  if (command == "layout")
    return runLayout(argc, argv);
  if (command == "import")
    return runImport(argc, argv);
  if (command == "compile")
    return runCompile(argc, argv);
  if (command == "explain")
    return runExplain(argc, argv);
  return fail(kExitBadInput,
              "unknown command '" + command + "'\n" + topLevelUsage());
}
