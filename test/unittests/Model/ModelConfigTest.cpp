//===- ModelConfigTest.cpp - Config import tests
//---------------------------===//
//
// Expected values are derived by hand from the bundled config.json files (and
// the family rules in docs/config-import.md), never by running the importer.
//
//===----------------------------------------------------------------------===//

#include "attnc/Model/ModelConfig.h"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#ifndef ATTNC_EXAMPLES_DIR
// Relative to the repository root, for a test run from there.
#define ATTNC_EXAMPLES_DIR "examples/configs"
#endif

using namespace attnc;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string examplePath(const std::string &name) {
  return std::string(ATTNC_EXAMPLES_DIR) + "/" + name;
}

/// The CLI's lit inputs live beside the examples in the source tree.
fs::path litInputsDir() {
  return fs::path(ATTNC_EXAMPLES_DIR) / ".." / ".." / "test" / "tools" /
         "attnc" / "Inputs";
}

#define IMPORT_EXAMPLE(var, file)                                              \
  Result<ModelConfig> var##_result =                                         \
      importModelConfigFile(examplePath(file));                                \
  ASSERT_TRUE(var##_result.ok()) << var##_result.error().message();            \
  const ModelConfig &var = *var##_result

#define IMPORT_TEXT(var, text)                                                 \
  Result<ModelConfig> var##_result = importModelConfig(text);                \
  ASSERT_TRUE(var##_result.ok()) << var##_result.error().message();            \
  const ModelConfig &var = *var##_result

std::vector<int64_t> range(int64_t begin, int64_t end, int64_t step = 1) {
  std::vector<int64_t> out;
  for (int64_t i = begin; i < end; i += step)
    out.push_back(i);
  return out;
}

/// Layers [0, n) not in `except`.
std::vector<int64_t> allBut(int64_t n, const std::vector<int64_t> &except) {
  std::set<int64_t> skip(except.begin(), except.end());
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i)
    if (!skip.count(i))
      out.push_back(i);
  return out;
}

/// Succeeds when importing `text` fails on `field` with `phrase` in the rule.
::testing::AssertionResult failsWithText(std::string_view text,
                                         const std::string &field,
                                         const std::string &phrase) {
  Result<ModelConfig> result = importModelConfig(text);
  if (result.ok())
    return ::testing::AssertionFailure()
           << "imported, but expected an error on '" << field << "'";
  const Status &error = result.error();
  if (error.field != field || error.rule.find(phrase) == std::string::npos)
    return ::testing::AssertionFailure()
           << "got \"" << error.message() << "\", expected field '" << field
           << "' and a rule containing \"" << phrase << "\"";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult failsWith(const json &config,
                                     const std::string &field,
                                     const std::string &phrase) {
  return failsWithText(config.dump(), field, phrase);
}

/// The first difference between two configs, or "" when equal. Doubles are
/// compared exactly: the spec must reproduce them bit for bit.
std::string difference(const ModelConfig &a, const ModelConfig &b) {
  std::ostringstream out;
  auto check = [&](bool same, const std::string &what) {
    if (!same && out.str().empty())
      out << what << " differs";
  };
  check(a.model_type == b.model_type, "model_type");
  check(a.dtype == b.dtype, "dtype");
  check(a.num_layers == b.num_layers, "num_layers");
  check(a.max_position_embeddings == b.max_position_embeddings,
        "max_position_embeddings");
  check(a.kinds.size() == b.kinds.size(), "number of kinds");
  for (std::size_t i = 0; i < std::min(a.kinds.size(), b.kinds.size()); ++i) {
    const LayerKind &x = a.kinds[i], &y = b.kinds[i];
    std::string k = "kinds[" + std::to_string(i) + "].";
    check(x.name == y.name, k + "name");
    check(x.layers == y.layers, k + "layers");
    check(x.heads.num_q_heads == y.heads.num_q_heads, k + "num_q_heads");
    check(x.heads.num_kv_heads == y.heads.num_kv_heads, k + "num_kv_heads");
    check(x.heads.qk_head_dim == y.heads.qk_head_dim, k + "qk_head_dim");
    check(x.heads.v_head_dim == y.heads.v_head_dim, k + "v_head_dim");
    check(x.heads.gate == y.heads.gate, k + "gate");
    check(x.qk_norm == y.qk_norm, k + "qk_norm");
    check(x.norm_eps == y.norm_eps, k + "norm_eps");
    check(x.norm_before_rope == y.norm_before_rope, k + "norm_before_rope");
    check(x.rope.style == y.rope.style, k + "rope.style");
    check(x.rope.rotary_dim == y.rope.rotary_dim, k + "rope.rotary_dim");
    check(x.rope.rotary_offset == y.rope.rotary_offset, k + "rope.offset");
    check(x.rope.theta == y.rope.theta, k + "rope.theta");
    const RopeScaling &s = x.rope.scaling, &t = y.rope.scaling;
    check(s.kind == t.kind, k + "scaling.kind");
    check(s.factor == t.factor, k + "scaling.factor");
    check(s.original_max_position == t.original_max_position,
          k + "scaling.original_max_position");
    check(s.low_freq_factor == t.low_freq_factor, k + "scaling.low");
    check(s.high_freq_factor == t.high_freq_factor, k + "scaling.high");
    check(s.beta_fast == t.beta_fast, k + "scaling.beta_fast");
    check(s.beta_slow == t.beta_slow, k + "scaling.beta_slow");
    check(s.mscale == t.mscale, k + "scaling.mscale");
    check(s.mscale_all_dim == t.mscale_all_dim, k + "scaling.mscale_all_dim");
    check(s.truncate == t.truncate, k + "scaling.truncate");
    check(x.sliding_window == y.sliding_window, k + "sliding_window");
    check(x.sinks == y.sinks, k + "sinks");
    check(x.softmax_scale == y.softmax_scale, k + "softmax_scale");
    check(x.logit_softcap == y.logit_softcap, k + "logit_softcap");
    check(x.value_scale == y.value_scale, k + "value_scale");
    check(x.mla.has_value() == y.mla.has_value(), k + "mla presence");
    if (x.mla && y.mla) {
      check(x.mla->kv_lora_rank == y.mla->kv_lora_rank, k + "mla.kv_lora_rank");
      check(x.mla->kv_norm_eps == y.mla->kv_norm_eps, k + "mla.kv_norm_eps");
      check(x.mla->latent_scale == y.mla->latent_scale, k + "mla.latent_scale");
      check(x.mla->rope_deinterleave == y.mla->rope_deinterleave,
            k + "mla.rope_deinterleave");
      check(x.mla->block_size == y.mla->block_size, k + "mla.block_size");
    }
  }
  return out.str();
}

const LayerKind *findKind(const ModelConfig &config, const std::string &name) {
  for (const LayerKind &kind : config.kinds)
    if (kind.name == name)
      return &kind;
  return nullptr;
}

void expectHeads(const LayerKind &kind, int64_t hq, int64_t hkv, int64_t dqk,
                 int64_t dv, GateLayout gate = GateLayout::None) {
  EXPECT_EQ(kind.heads.num_q_heads, hq) << kind.name;
  EXPECT_EQ(kind.heads.num_kv_heads, hkv) << kind.name;
  EXPECT_EQ(kind.heads.qk_head_dim, dqk) << kind.name;
  EXPECT_EQ(kind.heads.v_head_dim, dv) << kind.name;
  EXPECT_EQ(kind.heads.gate, gate) << kind.name;
}

/// A small valid Llama-style config that bad-config tests mutate.
json llamaBase() {
  return json{{"model_type", "llama"},           {"hidden_size", 4096},
              {"num_attention_heads", 32},       {"num_key_value_heads", 8},
              {"num_hidden_layers", 4},          {"rope_theta", 500000.0},
              {"max_position_embeddings", 8192}, {"rms_norm_eps", 1e-5}};
}

/// A valid config of a model type attnc does not know, with the features a
/// config cannot express spelled out.
json unknownExplicit() {
  json config = llamaBase();
  config["model_type"] = "foo";
  config["qk_norm"] = "rms";
  config["rope_style"] = "gptj";
  return config;
}

/// A bundled config.json as JSON, for the tests that break it.
json exampleJson(const std::string &name) {
  std::ifstream in(examplePath(name), std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

/// A file in the test's temp dir that removes itself.
class TempFile {
public:
  TempFile(const std::string &name, const std::string &content)
      : path_((fs::path(::testing::TempDir()) / name).string()) {
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

double mscaleSquared(double factor, double mscale_all_dim) {
  double m = 0.1 * mscale_all_dim * std::log(factor) + 1.0;
  return m * m;
}

//===----------------------------------------------------------------------===//
// The bundled configs, one test each
//===----------------------------------------------------------------------===//

// Files with a hand-derived test below; the coverage test keeps it complete.
const char *const kCoveredExamples[] = {
    "llama-3.1-8b-instruct.json",
    "mistral-7b-instruct-v0.3.json",
    "qwen3-8b.json",
    "qwen3-next-80b-a3b.json",
    "qwen3.5-27b.json",
    "gemma-3-27b-it.json",
    "gpt-oss-20b.json",
    "deepseek-v3.json",
    "kimi-k2-instruct.json",
    "mimo-v2-flash.json",
};

TEST(ModelConfigExamples, Llama31) {
  IMPORT_EXAMPLE(c, "llama-3.1-8b-instruct.json");
  EXPECT_EQ(c.model_type, "llama");
  EXPECT_EQ(c.dtype, "bf16");
  EXPECT_EQ(c.num_layers, 32);
  EXPECT_EQ(c.max_position_embeddings, 131072);
  ASSERT_EQ(c.kinds.size(), 1u);
  const LayerKind &k = c.kinds[0];
  EXPECT_EQ(k.name, "full_attention");
  EXPECT_EQ(k.layers, range(0, 32));
  expectHeads(k, 32, 8, 4096 / 32, 128); // no head_dim key: hidden / heads
  EXPECT_EQ(k.qk_norm, NormStyle::None);
  EXPECT_DOUBLE_EQ(k.norm_eps, 1e-5);
  EXPECT_TRUE(k.norm_before_rope);
  EXPECT_EQ(k.rope.style, RopeStyle::Neox);
  EXPECT_EQ(k.rope.rotary_dim, 128);
  EXPECT_EQ(k.rope.rotary_offset, 0);
  EXPECT_DOUBLE_EQ(k.rope.theta, 500000.0);
  EXPECT_EQ(k.rope.scaling.kind, RopeScalingKind::Llama3);
  EXPECT_DOUBLE_EQ(k.rope.scaling.factor, 8.0);
  EXPECT_DOUBLE_EQ(k.rope.scaling.low_freq_factor, 1.0);
  EXPECT_DOUBLE_EQ(k.rope.scaling.high_freq_factor, 4.0);
  EXPECT_EQ(k.rope.scaling.original_max_position, 8192);
  EXPECT_EQ(k.sliding_window, 0);
  EXPECT_FALSE(k.sinks);
  EXPECT_DOUBLE_EQ(k.softmax_scale, 1.0 / std::sqrt(128.0));
  EXPECT_EQ(k.logit_softcap, 0.0);
  EXPECT_EQ(k.value_scale, 1.0);
}

TEST(ModelConfigExamples, Mistral7B) {
  IMPORT_EXAMPLE(c, "mistral-7b-instruct-v0.3.json");
  EXPECT_EQ(c.model_type, "mistral");
  EXPECT_EQ(c.num_layers, 32);
  EXPECT_EQ(c.max_position_embeddings, 32768);
  ASSERT_EQ(c.kinds.size(), 1u);
  const LayerKind &k = c.kinds[0];
  EXPECT_EQ(k.name, "full_attention"); // sliding_window null: no SWA
  EXPECT_EQ(k.layers, range(0, 32));
  expectHeads(k, 32, 8, 128, 128);
  EXPECT_EQ(k.qk_norm, NormStyle::None);
  EXPECT_EQ(k.rope.style, RopeStyle::Neox);
  EXPECT_EQ(k.rope.rotary_dim, 128);
  EXPECT_DOUBLE_EQ(k.rope.theta, 1e6);
  EXPECT_EQ(k.rope.scaling.kind, RopeScalingKind::None);
  EXPECT_EQ(k.sliding_window, 0);
  EXPECT_FALSE(k.sinks);
  EXPECT_DOUBLE_EQ(k.norm_eps, 1e-5);
}

TEST(ModelConfigExamples, Qwen3_8B) {
  IMPORT_EXAMPLE(c, "qwen3-8b.json");
  EXPECT_EQ(c.model_type, "qwen3");
  EXPECT_EQ(c.num_layers, 36);
  EXPECT_EQ(c.max_position_embeddings, 40960);
  ASSERT_EQ(c.kinds.size(), 1u);
  const LayerKind &k = c.kinds[0];
  EXPECT_EQ(k.name, "full_attention"); // use_sliding_window false
  EXPECT_EQ(k.layers, range(0, 36));
  expectHeads(k, 32, 8, 128, 128);
  EXPECT_EQ(k.qk_norm, NormStyle::Plain);
  EXPECT_DOUBLE_EQ(k.norm_eps, 1e-6);
  EXPECT_EQ(k.rope.style, RopeStyle::Neox);
  EXPECT_EQ(k.rope.rotary_dim, 128);
  EXPECT_DOUBLE_EQ(k.rope.theta, 1e6);
  EXPECT_EQ(k.rope.scaling.kind, RopeScalingKind::None); // rope_scaling null
  EXPECT_EQ(k.sliding_window, 0);
  EXPECT_DOUBLE_EQ(k.softmax_scale, 1.0 / std::sqrt(128.0));
}

TEST(ModelConfigExamples, Qwen3Next) {
  IMPORT_EXAMPLE(c, "qwen3-next-80b-a3b.json");
  EXPECT_EQ(c.model_type, "qwen3_next");
  EXPECT_EQ(c.num_layers, 48);
  EXPECT_EQ(c.max_position_embeddings, 262144);
  // full_attention_interval 4: layers 3, 7, ..., 47; the rest are DeltaNet.
  ASSERT_EQ(c.kinds.size(), 1u);
  const LayerKind &k = c.kinds[0];
  EXPECT_EQ(k.name, "full_attention");
  EXPECT_EQ(k.layers, range(3, 48, 4));
  EXPECT_EQ(k.layers.size(), 12u);
  expectHeads(k, 16, 2, 256, 256, GateLayout::InterleavedWithQ);
  EXPECT_EQ(k.qk_norm, NormStyle::Gemma);
  EXPECT_DOUBLE_EQ(k.norm_eps, 1e-6);
  EXPECT_EQ(k.rope.style, RopeStyle::Neox);
  EXPECT_EQ(k.rope.rotary_dim, 64); // 0.25 * 256
  EXPECT_EQ(k.rope.rotary_offset, 0);
  EXPECT_DOUBLE_EQ(k.rope.theta, 1e7);
  EXPECT_EQ(k.rope.scaling.kind, RopeScalingKind::None);
  EXPECT_DOUBLE_EQ(k.softmax_scale, 1.0 / 16.0);
  EXPECT_FALSE(k.sinks);
  EXPECT_EQ(k.sliding_window, 0);
}

TEST(ModelConfigExamples, Qwen35) {
  IMPORT_EXAMPLE(c, "qwen3.5-27b.json");
  EXPECT_EQ(c.model_type, "qwen3_5");
  EXPECT_EQ(c.dtype, "bf16"); // text_config.dtype
  EXPECT_EQ(c.num_layers, 64);
  EXPECT_EQ(c.max_position_embeddings, 262144);
  ASSERT_EQ(c.kinds.size(), 1u);
  const LayerKind &k = c.kinds[0];
  EXPECT_EQ(k.name, "full_attention");
  EXPECT_EQ(k.layers, range(3, 64, 4)); // from layer_types
  EXPECT_EQ(k.layers.size(), 16u);
  expectHeads(k, 24, 4, 256, 256, GateLayout::InterleavedWithQ);
  EXPECT_EQ(k.qk_norm, NormStyle::Gemma);
  EXPECT_EQ(k.rope.style, RopeStyle::Neox);
  EXPECT_EQ(k.rope.rotary_dim, 64);    // rope_parameters.partial_rotary_factor
  EXPECT_DOUBLE_EQ(k.rope.theta, 1e7); // rope_parameters.rope_theta
  // rope_type default with mrope sections: ordinary rope for text.
  EXPECT_EQ(k.rope.scaling.kind, RopeScalingKind::None);
  EXPECT_DOUBLE_EQ(k.softmax_scale, 1.0 / 16.0);
}

TEST(ModelConfigExamples, Gemma3_27B) {
  IMPORT_EXAMPLE(c, "gemma-3-27b-it.json");
  EXPECT_EQ(c.model_type, "gemma3");
  EXPECT_EQ(c.dtype, "bf16"); // outer torch_dtype
  EXPECT_EQ(c.num_layers, 62);
  EXPECT_EQ(c.max_position_embeddings, 131072); // class default
  ASSERT_EQ(c.kinds.size(), 2u);
  EXPECT_EQ(c.kinds[0].name, "full_attention");
  EXPECT_EQ(c.kinds[1].name, "sliding_attention");
  const LayerKind &full = c.kinds[0];
  const LayerKind &local = c.kinds[1];
  // Pattern 6: layer i is global iff (i + 1) % 6 == 0.
  std::vector<int64_t> global = range(5, 62, 6);
  EXPECT_EQ(full.layers, global);
  EXPECT_EQ(full.layers.size(), 10u);
  EXPECT_EQ(local.layers, allBut(62, global));
  EXPECT_EQ(local.layers.size(), 52u);
  for (const LayerKind *k : {&full, &local}) {
    expectHeads(*k, 32, 16, 128, 128);
    EXPECT_EQ(k->qk_norm, NormStyle::Gemma);
    EXPECT_DOUBLE_EQ(k->norm_eps, 1e-6);
    EXPECT_EQ(k->rope.style, RopeStyle::Neox);
    EXPECT_EQ(k->rope.rotary_dim, 128);
    // query_pre_attn_scalar 168, not head_dim 128.
    EXPECT_DOUBLE_EQ(k->softmax_scale, 1.0 / std::sqrt(168.0));
    EXPECT_EQ(k->logit_softcap, 0.0);
    EXPECT_FALSE(k->sinks);
  }
  EXPECT_DOUBLE_EQ(full.rope.theta, 1e6);
  EXPECT_EQ(full.rope.scaling.kind, RopeScalingKind::Linear);
  EXPECT_DOUBLE_EQ(full.rope.scaling.factor, 8.0);
  EXPECT_EQ(full.sliding_window, 0);
  EXPECT_DOUBLE_EQ(local.rope.theta, 1e4);
  EXPECT_EQ(local.rope.scaling.kind, RopeScalingKind::None);
  EXPECT_EQ(local.sliding_window, 1024);
}

TEST(ModelConfigExamples, GptOss20B) {
  IMPORT_EXAMPLE(c, "gpt-oss-20b.json");
  EXPECT_EQ(c.model_type, "gpt_oss");
  EXPECT_EQ(c.dtype, "bf16"); // no dtype key
  EXPECT_EQ(c.num_layers, 24);
  EXPECT_EQ(c.max_position_embeddings, 131072);
  ASSERT_EQ(c.kinds.size(), 2u);
  const LayerKind *full = findKind(c, "full_attention");
  const LayerKind *local = findKind(c, "sliding_attention");
  ASSERT_TRUE(full && local);
  EXPECT_EQ(full->layers, range(1, 24, 2));
  EXPECT_EQ(local->layers, range(0, 24, 2));
  EXPECT_EQ(full->sliding_window, 0);
  EXPECT_EQ(local->sliding_window, 128);
  for (const LayerKind *k : {full, local}) {
    expectHeads(*k, 64, 8, 64, 64);
    EXPECT_TRUE(k->sinks);
    EXPECT_EQ(k->qk_norm, NormStyle::None);
    EXPECT_DOUBLE_EQ(k->norm_eps, 1e-5);
    EXPECT_EQ(k->rope.style, RopeStyle::Neox);
    EXPECT_EQ(k->rope.rotary_dim, 64);
    EXPECT_DOUBLE_EQ(k->rope.theta, 150000.0);
    const RopeScaling &s = k->rope.scaling;
    EXPECT_EQ(s.kind, RopeScalingKind::Yarn);
    EXPECT_DOUBLE_EQ(s.factor, 32.0);
    EXPECT_EQ(s.original_max_position, 4096);
    EXPECT_DOUBLE_EQ(s.beta_fast, 32.0);
    EXPECT_DOUBLE_EQ(s.beta_slow, 1.0);
    EXPECT_FALSE(s.truncate);
    EXPECT_DOUBLE_EQ(k->softmax_scale, 1.0 / 8.0);
  }
}

TEST(ModelConfigExamples, DeepSeekV3) {
  IMPORT_EXAMPLE(c, "deepseek-v3.json");
  EXPECT_EQ(c.model_type, "deepseek_v3");
  EXPECT_EQ(c.num_layers, 61);
  EXPECT_EQ(c.max_position_embeddings, 163840);
  ASSERT_EQ(c.kinds.size(), 1u);
  const LayerKind &k = c.kinds[0];
  EXPECT_EQ(k.name, "full_attention");
  EXPECT_EQ(k.layers, range(0, 61));
  expectHeads(k, 128, 128, 128 + 64, 128);
  EXPECT_EQ(k.qk_norm, NormStyle::None);
  EXPECT_EQ(k.rope.style, RopeStyle::Gptj);
  EXPECT_EQ(k.rope.rotary_dim, 64);
  EXPECT_EQ(k.rope.rotary_offset, 128);
  EXPECT_DOUBLE_EQ(k.rope.theta, 10000.0);
  const RopeScaling &s = k.rope.scaling;
  EXPECT_EQ(s.kind, RopeScalingKind::Yarn); // legacy "type" key
  EXPECT_DOUBLE_EQ(s.factor, 40.0);
  EXPECT_EQ(s.original_max_position, 4096);
  EXPECT_DOUBLE_EQ(s.beta_fast, 32.0);
  EXPECT_DOUBLE_EQ(s.beta_slow, 1.0);
  EXPECT_DOUBLE_EQ(s.mscale, 1.0);
  EXPECT_DOUBLE_EQ(s.mscale_all_dim, 1.0);
  EXPECT_TRUE(s.truncate);
  // 192^-0.5 * (0.1 * 1.0 * ln 40 + 1)^2 ~= 0.13523
  EXPECT_DOUBLE_EQ(k.softmax_scale,
                   1.0 / std::sqrt(192.0) * mscaleSquared(40.0, 1.0));
  EXPECT_NEAR(k.softmax_scale, 0.135234, 1e-6);
  EXPECT_FALSE(k.sinks);
  // The latent form: kv_lora_rank 512, rope_interleave (default true) means
  // interleaved pairs in, halves out; pages of 64.
  ASSERT_TRUE(k.mla.has_value());
  EXPECT_EQ(k.mla->kv_lora_rank, 512);
  EXPECT_EQ(k.mla->kv_norm_eps, 1e-6);
  EXPECT_EQ(k.mla->latent_scale, 1.0);
  EXPECT_TRUE(k.mla->rope_deinterleave);
  EXPECT_EQ(k.mla->block_size, 64);
}

TEST(ModelConfigExamples, KimiK2) {
  IMPORT_EXAMPLE(c, "kimi-k2-instruct.json");
  EXPECT_EQ(c.model_type, "kimi_k2");
  EXPECT_EQ(c.num_layers, 61);
  EXPECT_EQ(c.max_position_embeddings, 131072);
  ASSERT_EQ(c.kinds.size(), 1u);
  const LayerKind &k = c.kinds[0];
  expectHeads(k, 64, 64, 192, 128);
  EXPECT_EQ(k.rope.style, RopeStyle::Gptj);
  EXPECT_EQ(k.rope.rotary_dim, 64);
  EXPECT_EQ(k.rope.rotary_offset, 128);
  EXPECT_DOUBLE_EQ(k.rope.theta, 50000.0);
  EXPECT_EQ(k.rope.scaling.kind, RopeScalingKind::Yarn);
  EXPECT_DOUBLE_EQ(k.rope.scaling.factor, 32.0);
  EXPECT_DOUBLE_EQ(k.rope.scaling.beta_fast, 1.0);
  EXPECT_DOUBLE_EQ(k.rope.scaling.beta_slow, 1.0);
  EXPECT_DOUBLE_EQ(k.softmax_scale,
                   1.0 / std::sqrt(192.0) * mscaleSquared(32.0, 1.0));
  EXPECT_EQ(k.qk_norm, NormStyle::None);
}

TEST(ModelConfigExamples, MiMoV2Flash) {
  IMPORT_EXAMPLE(c, "mimo-v2-flash.json");
  EXPECT_EQ(c.model_type, "mimo_v2_flash");
  EXPECT_EQ(c.num_layers, 48);
  EXPECT_EQ(c.max_position_embeddings, 262144);
  ASSERT_EQ(c.kinds.size(), 2u);
  const LayerKind &full = c.kinds[0];
  const LayerKind &swa = c.kinds[1];
  EXPECT_EQ(full.name, "full_attention");
  EXPECT_EQ(swa.name, "sliding_attention");
  std::vector<int64_t> global = {0, 5, 11, 17, 23, 29, 35, 41, 47};
  EXPECT_EQ(full.layers, global);
  EXPECT_EQ(swa.layers, allBut(48, global));
  EXPECT_EQ(swa.layers.size(), 39u);
  expectHeads(full, 64, 4, 192, 128);
  expectHeads(swa, 64, 8, 192, 128);
  EXPECT_DOUBLE_EQ(full.rope.theta, 5e6);
  EXPECT_DOUBLE_EQ(swa.rope.theta, 1e4);
  EXPECT_FALSE(full.sinks);
  EXPECT_TRUE(swa.sinks);
  EXPECT_EQ(full.sliding_window, 0);
  // sliding_window_size 128 previous tokens + the query (MiMoV2FlashConfig).
  EXPECT_EQ(swa.sliding_window, 129);
  for (const LayerKind *k : {&full, &swa}) {
    EXPECT_EQ(k->qk_norm, NormStyle::None);
    EXPECT_DOUBLE_EQ(k->norm_eps, 1e-5); // layernorm_epsilon
    EXPECT_EQ(k->rope.style, RopeStyle::Neox);
    EXPECT_EQ(k->rope.rotary_dim, 64); // int(192 * 0.334) = int(64.128)
    EXPECT_EQ(k->rope.rotary_offset, 0);
    EXPECT_EQ(k->rope.scaling.kind, RopeScalingKind::None);
    EXPECT_DOUBLE_EQ(k->value_scale, 0.707);
    EXPECT_DOUBLE_EQ(k->softmax_scale, 1.0 / std::sqrt(192.0));
  }
}

/// Every *.json in the examples folder has a test above (a link such as
/// default.json counts as its target) and survives the spec round trip.
TEST(ModelConfigExamples, EveryBundledConfigIsCoveredAndRoundTrips) {
  std::set<fs::path> covered;
  for (const char *name : kCoveredExamples)
    covered.insert(fs::canonical(examplePath(name)));
  int seen = 0;
  for (const fs::directory_entry &entry :
       fs::directory_iterator(ATTNC_EXAMPLES_DIR)) {
    if (entry.path().extension() != ".json")
      continue;
    ++seen;
    const std::string path = entry.path().string();
    SCOPED_TRACE(path);
    EXPECT_TRUE(covered.count(fs::canonical(entry.path())))
        << "no hand-derived expectations for " << path;
    Result<ModelConfig> config = importModelConfigFile(path);
    ASSERT_TRUE(config.ok()) << config.error().message();
    std::string spec = toSpecJson(*config);
    Result<ModelConfig> again = importModelConfig(spec);
    ASSERT_TRUE(again.ok()) << again.error().message() << "\n" << spec;
    EXPECT_EQ(difference(*config, *again), "");
    // The spec text is a fixed point too.
    EXPECT_EQ(toSpecJson(*again), spec);
  }
  EXPECT_GE(seen, 10);
}

//===----------------------------------------------------------------------===//
// Family rules beyond the bundled files
//===----------------------------------------------------------------------===//

TEST(ModelConfigFamilies, MistralWithWindowIsOneSlidingKind) {
  json config = llamaBase();
  config["model_type"] = "mistral";
  config["sliding_window"] = 4096;
  IMPORT_TEXT(c, config.dump());
  ASSERT_EQ(c.kinds.size(), 1u);
  EXPECT_EQ(c.kinds[0].name, "sliding_attention");
  EXPECT_EQ(c.kinds[0].layers, range(0, 4));
  EXPECT_EQ(c.kinds[0].sliding_window, 4096);
}

TEST(ModelConfigFamilies, LlamaIgnoresSlidingWindow) {
  json config = llamaBase();
  config["sliding_window"] = 4096;
  IMPORT_TEXT(c, config.dump());
  ASSERT_EQ(c.kinds.size(), 1u);
  EXPECT_EQ(c.kinds[0].sliding_window, 0);
}

TEST(ModelConfigFamilies, Qwen3SlidingFromMaxWindowLayers) {
  json config = llamaBase();
  config["model_type"] = "qwen3";
  config["use_sliding_window"] = true;
  config["sliding_window"] = 2048;
  config["max_window_layers"] = 3;
  IMPORT_TEXT(c, config.dump());
  ASSERT_EQ(c.kinds.size(), 2u);
  EXPECT_EQ(c.kinds[0].layers, range(0, 3));
  EXPECT_EQ(c.kinds[1].layers, std::vector<int64_t>{3});
  EXPECT_EQ(c.kinds[1].sliding_window, 2048);
  EXPECT_EQ(c.kinds[1].qk_norm, NormStyle::Plain);
}

TEST(ModelConfigFamilies, Qwen3MoeSlidesEveryLayer) {
  // Qwen3MoeConfig has no layer_types and no max_window_layers rule: with
  // use_sliding_window one sliding mask serves every layer.
  json config = llamaBase();
  config["model_type"] = "qwen3_moe";
  config["use_sliding_window"] = true;
  config["sliding_window"] = 2048;
  config["max_window_layers"] = 3;
  IMPORT_TEXT(c, config.dump());
  ASSERT_EQ(c.kinds.size(), 1u);
  EXPECT_EQ(c.kinds[0].name, "sliding_attention");
  EXPECT_EQ(c.kinds[0].layers, range(0, 4));
  EXPECT_EQ(c.kinds[0].sliding_window, 2048);
  config["use_sliding_window"] = false;
  IMPORT_TEXT(off, config.dump());
  ASSERT_EQ(off.kinds.size(), 1u);
  EXPECT_EQ(off.kinds[0].sliding_window, 0);
}

TEST(ModelConfigFamilies, QwenNextGateCanBeTurnedOff) {
  json config = llamaBase();
  config["model_type"] = "qwen3_next";
  config["attn_output_gate"] = false;
  config["full_attention_interval"] = 2;
  IMPORT_TEXT(c, config.dump());
  ASSERT_EQ(c.kinds.size(), 1u);
  EXPECT_EQ(c.kinds[0].heads.gate, GateLayout::None);
  EXPECT_EQ(c.kinds[0].layers, (std::vector<int64_t>{1, 3}));
}

TEST(ModelConfigFamilies, GemmaLayerTypesAndDefaults) {
  // layer_types wins over the pattern; absent keys take Gemma3TextConfig
  // defaults (head_dim 256, window 4096, query_pre_attn_scalar 256).
  // Gemma3Attention does not pass attn_logit_softcapping to the attention,
  // so a value in the config does not soft-cap (Gemma 2 does).
  json text = {{"model_type", "gemma3_text"},
               {"num_attention_heads", 8},
               {"num_key_value_heads", 4},
               {"num_hidden_layers", 3},
               {"sliding_window_pattern", 2},
               {"layer_types",
                {"full_attention", "sliding_attention", "full_attention"}},
               {"rope_local_base_freq", 20000.0},
               {"attn_logit_softcapping", 50.0}};
  IMPORT_TEXT(c, text.dump());
  EXPECT_EQ(c.model_type, "gemma3_text");
  ASSERT_EQ(c.kinds.size(), 2u);
  EXPECT_EQ(c.kinds[0].layers, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(c.kinds[1].layers, std::vector<int64_t>{1});
  EXPECT_EQ(c.kinds[0].heads.qk_head_dim, 256);
  EXPECT_EQ(c.kinds[1].sliding_window, 4096);
  EXPECT_DOUBLE_EQ(c.kinds[0].rope.theta, 1e6);
  EXPECT_DOUBLE_EQ(c.kinds[1].rope.theta, 20000.0);
  EXPECT_DOUBLE_EQ(c.kinds[0].softmax_scale, 1.0 / 16.0);
  EXPECT_DOUBLE_EQ(c.kinds[1].logit_softcap, 0.0);
}

TEST(ModelConfigFamilies, RopeParametersPerLayerType) {
  // transformers v5 keys rope_parameters by layer type for Gemma 3.
  json text = {
      {"model_type", "gemma3_text"},
      {"num_attention_heads", 8},
      {"num_key_value_heads", 4},
      {"head_dim", 128},
      {"num_hidden_layers", 2},
      {"layer_types", {"sliding_attention", "full_attention"}},
      {"sliding_window", 512},
      {"rope_parameters",
       {{"full_attention",
         {{"rope_type", "linear"}, {"factor", 8.0}, {"rope_theta", 1e6}}},
        {"sliding_attention",
         {{"rope_type", "default"}, {"rope_theta", 1e4}}}}}};
  IMPORT_TEXT(c, text.dump());
  const LayerKind *full = findKind(c, "full_attention");
  const LayerKind *local = findKind(c, "sliding_attention");
  ASSERT_TRUE(full && local);
  EXPECT_EQ(full->rope.scaling.kind, RopeScalingKind::Linear);
  EXPECT_DOUBLE_EQ(full->rope.theta, 1e6);
  EXPECT_EQ(local->rope.scaling.kind, RopeScalingKind::None);
  EXPECT_DOUBLE_EQ(local->rope.theta, 1e4);
}

TEST(ModelConfigFamilies, GptOssDefaultLayerTypes) {
  json config = llamaBase();
  config["model_type"] = "gpt_oss";
  config["sliding_window"] = 128;
  config["head_dim"] = 64;
  config.erase("rope_theta");
  IMPORT_TEXT(c, config.dump());
  ASSERT_EQ(c.kinds.size(), 2u);
  EXPECT_EQ(c.kinds[0].layers, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(c.kinds[1].layers, (std::vector<int64_t>{0, 2}));
  EXPECT_DOUBLE_EQ(c.kinds[0].rope.theta, 150000.0);
  EXPECT_TRUE(c.kinds[0].sinks && c.kinds[1].sinks);
}

TEST(ModelConfigFamilies, MlaIgnoresHeadDimAndKvHeads) {
  // DeepseekV3Config.to_dict() writes head_dim = qk_rope_head_dim.
  json config = exampleJson("deepseek-v3.json");
  config["head_dim"] = 64;
  config["num_key_value_heads"] = 1;
  IMPORT_TEXT(c, config.dump());
  expectHeads(c.kinds[0], 128, 128, 192, 128);
}

TEST(ModelConfigFamilies, MlaWithoutScalingKeepsPlainScale) {
  json config = exampleJson("deepseek-v3.json");
  config["rope_scaling"] = nullptr;
  IMPORT_TEXT(c, config.dump());
  EXPECT_DOUBLE_EQ(c.kinds[0].softmax_scale, 1.0 / std::sqrt(192.0));
  EXPECT_EQ(c.kinds[0].rope.scaling.kind, RopeScalingKind::None);
}

TEST(ModelConfigFamilies, RotaryDimSources) {
  json config = llamaBase();
  config["partial_rotary_factor"] = 0.5;
  {
    IMPORT_TEXT(c, config.dump());
    EXPECT_EQ(c.kinds[0].rope.rotary_dim, 64);
  }
  config["rotary_dim"] = 32; // wins over the factor
  {
    IMPORT_TEXT(c, config.dump());
    EXPECT_EQ(c.kinds[0].rope.rotary_dim, 32);
  }
}

TEST(ModelConfigFamilies, DtypeAndEpsFallbacks) {
  json config = llamaBase();
  config.erase("rms_norm_eps");
  config["torch_dtype"] = "float16";
  {
    IMPORT_TEXT(c, config.dump());
    EXPECT_EQ(c.dtype, "fp16");
    EXPECT_DOUBLE_EQ(c.kinds[0].norm_eps, 1e-6);
  }
  config["dtype"] = "float32"; // the newer key wins
  config["layernorm_epsilon"] = 1e-5;
  {
    IMPORT_TEXT(c, config.dump());
    EXPECT_EQ(c.dtype, "fp32");
    EXPECT_DOUBLE_EQ(c.kinds[0].norm_eps, 1e-5);
  }
}

TEST(ModelConfigFamilies, NullsUnderscoreKeysAndScalingKinds) {
  json config = llamaBase();
  config["num_key_value_heads"] = nullptr; // default Hq
  config["_num_attention_heads"] = "ignored";
  config["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  IMPORT_TEXT(c, config.dump());
  const LayerKind &k = c.kinds[0];
  EXPECT_EQ(k.heads.num_kv_heads, 32);
  EXPECT_EQ(k.rope.scaling.kind, RopeScalingKind::DynamicNtk);
  EXPECT_DOUBLE_EQ(k.rope.scaling.factor, 2.0);
  EXPECT_EQ(k.rope.scaling.original_max_position, 8192); // max positions
}

//===----------------------------------------------------------------------===//
// Unknown model types
//===----------------------------------------------------------------------===//

TEST(ModelConfigUnknown, RefusedWhenAmbiguous) {
  json config = llamaBase();
  config["model_type"] = "foo";
  EXPECT_TRUE(failsWith(config, "model_type",
                        "unknown model type 'foo': q/k norm presence is "
                        "ambiguous; set \"qk_norm\""));
  config["qk_norm"] = "none";
  EXPECT_TRUE(failsWith(config, "model_type",
                        "rope style is ambiguous; set \"rope_style\""));
  config["qk_norm"] = "layer";
  EXPECT_TRUE(failsWith(config, "qk_norm", "must be \"none\", \"rms\""));
  config["qk_norm"] = "rms";
  config["rope_style"] = "rotate_half";
  EXPECT_TRUE(failsWith(config, "rope_style", "must be \"none\", \"neox\""));
}

TEST(ModelConfigUnknown, RefusesAmbiguousWindowAndGate) {
  json config = unknownExplicit();
  config["sliding_window"] = 1024;
  EXPECT_TRUE(failsWith(config, "sliding_window",
                        "which layers use the window is ambiguous"));
  config = unknownExplicit();
  config["attn_output_gate"] = true;
  EXPECT_TRUE(
      failsWith(config, "attn_output_gate", "the gate layout is ambiguous"));
}

TEST(ModelConfigUnknown, AcceptedWhenExplicit) {
  json config = unknownExplicit();
  config["head_dim"] = 64;
  config["partial_rotary_factor"] = 0.5;
  config["sinks"] = true;
  config["gate"] = "qkvg";
  config["layer_types"] = {"sliding_attention", "full_attention",
                           "linear_attention", "full_attention"};
  config["sliding_window"] = 256;
  IMPORT_TEXT(c, config.dump());
  EXPECT_EQ(c.model_type, "foo");
  ASSERT_EQ(c.kinds.size(), 2u);
  const LayerKind &full = c.kinds[0];
  EXPECT_EQ(full.layers, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(c.kinds[1].layers, std::vector<int64_t>{0});
  EXPECT_EQ(c.kinds[1].sliding_window, 256);
  expectHeads(full, 32, 8, 64, 64, GateLayout::Concatenated);
  EXPECT_EQ(full.qk_norm, NormStyle::Plain);
  EXPECT_EQ(full.rope.style, RopeStyle::Gptj);
  EXPECT_EQ(full.rope.rotary_dim, 32);
  EXPECT_DOUBLE_EQ(full.rope.theta, 500000.0);
  EXPECT_TRUE(full.sinks);
  // And the spec reproduces it.
  IMPORT_TEXT(again, toSpecJson(c));
  EXPECT_EQ(difference(c, again), "");
}

TEST(ModelConfigUnknown, RopeNoneNeedsNoRotaryKeys) {
  json config = unknownExplicit();
  config["rope_style"] = "none";
  config["rotary_dim"] = 63; // irrelevant without rope
  IMPORT_TEXT(c, config.dump());
  EXPECT_EQ(c.kinds[0].rope.style, RopeStyle::None);
  EXPECT_EQ(c.kinds[0].rope.rotary_dim, 0);
}

//===----------------------------------------------------------------------===//
// Bad configs: one test per class, asserting field and rule
//===----------------------------------------------------------------------===//

TEST(ModelConfigErrors, MissingField) {
  json config = llamaBase();
  config.erase("num_attention_heads");
  EXPECT_TRUE(
      failsWith(config, "num_attention_heads", "required field is missing"));
  config = llamaBase();
  config.erase("num_hidden_layers");
  EXPECT_TRUE(
      failsWith(config, "num_hidden_layers", "required field is missing"));
  config = llamaBase();
  config.erase("model_type");
  EXPECT_TRUE(failsWith(config, "model_type", "required field is missing"));
  config = llamaBase();
  config["num_attention_heads"] = nullptr; // null is absent
  EXPECT_TRUE(
      failsWith(config, "num_attention_heads", "required field is missing"));
  // No head_dim and nothing to derive it from.
  config = llamaBase();
  config.erase("hidden_size");
  EXPECT_TRUE(failsWith(config, "head_dim", "no hidden_size"));
  // MLA needs both halves and an explicit v_head_dim.
  json mla = exampleJson("deepseek-v3.json");
  mla.erase("qk_nope_head_dim");
  EXPECT_TRUE(failsWith(mla, "qk_nope_head_dim", "MLA"));
  mla = exampleJson("deepseek-v3.json");
  mla.erase("v_head_dim");
  EXPECT_TRUE(failsWith(mla, "v_head_dim", "required field is missing"));
  // Sliding layers need a window.
  json oss = exampleJson("gpt-oss-20b.json");
  oss.erase("sliding_window");
  EXPECT_TRUE(failsWith(oss, "sliding_window", "sliding_attention"));
  // Rope scaling without a type.
  config = llamaBase();
  config["rope_scaling"] = {{"factor", 2.0}};
  EXPECT_TRUE(
      failsWith(config, "rope_scaling.rope_type", "required field is missing"));
  config["rope_scaling"] = {{"rope_type", "linear"}};
  EXPECT_TRUE(failsWith(config, "rope_scaling.factor", "required"));
  config["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  EXPECT_TRUE(failsWith(config, "rope_scaling.original_max_position_embeddings",
                        "required"));
  // MiMo without its layer pattern.
  json mimo = exampleJson("mimo-v2-flash.json");
  mimo.erase("hybrid_layer_pattern");
  EXPECT_TRUE(failsWith(mimo, "hybrid_layer_pattern", "required"));
  mimo = exampleJson("mimo-v2-flash.json");
  mimo.erase("swa_head_dim");
  EXPECT_TRUE(failsWith(mimo, "swa_head_dim", "required"));
}

TEST(ModelConfigErrors, ZeroCounts) {
  json config = llamaBase();
  config["num_attention_heads"] = 0;
  EXPECT_TRUE(failsWith(config, "num_attention_heads", "must be >= 1 (got 0)"));
  config = llamaBase();
  config["num_key_value_heads"] = 0;
  EXPECT_TRUE(failsWith(config, "num_key_value_heads", "must be >= 1"));
  config = llamaBase();
  config["head_dim"] = 0;
  EXPECT_TRUE(failsWith(config, "head_dim", "must be >= 1"));
  config = llamaBase();
  config["v_head_dim"] = 0;
  EXPECT_TRUE(failsWith(config, "v_head_dim", "must be >= 1"));
  config = llamaBase();
  config["num_hidden_layers"] = 0;
  EXPECT_TRUE(failsWith(config, "num_hidden_layers", "must be >= 1"));
  config = llamaBase();
  config["rope_theta"] = 0;
  EXPECT_TRUE(failsWith(config, "rope_theta", "must be > 0"));
}

TEST(ModelConfigErrors, NegativeCounts) {
  json config = llamaBase();
  config["num_attention_heads"] = -32;
  EXPECT_TRUE(
      failsWith(config, "num_attention_heads", "must be >= 1 (got -32)"));
  config = llamaBase();
  config["num_key_value_heads"] = -8;
  EXPECT_TRUE(
      failsWith(config, "num_key_value_heads", "must be >= 1 (got -8)"));
  config = llamaBase();
  config["head_dim"] = -128;
  EXPECT_TRUE(failsWith(config, "head_dim", "must be >= 1"));
  config = llamaBase();
  config["sliding_window"] = -1;
  config["model_type"] = "mistral";
  EXPECT_TRUE(failsWith(config, "sliding_window", "must be >= 1"));
}

TEST(ModelConfigErrors, TooLarge) {
  json config = llamaBase();
  config["num_hidden_layers"] = 1000000000;
  EXPECT_TRUE(failsWith(config, "num_hidden_layers", "must be <="));
  config = llamaBase();
  config["num_attention_heads"] = 18446744073709551615ull;
  EXPECT_TRUE(failsWith(config, "num_attention_heads", "must be <="));
}

TEST(ModelConfigErrors, GqaIndivisible) {
  json config = llamaBase();
  config["num_key_value_heads"] = 5;
  EXPECT_TRUE(failsWith(config, "num_key_value_heads",
                        "must divide num_attention_heads (32 % 5 != 0)"));
  // Not derivable: 4000 / 48 is not whole.
  config = llamaBase();
  config["hidden_size"] = 4000;
  config["num_attention_heads"] = 48;
  EXPECT_TRUE(failsWith(config, "head_dim", "not divisible"));
  // MiMo's SWA heads are checked under their own names.
  json mimo = exampleJson("mimo-v2-flash.json");
  mimo["swa_num_key_value_heads"] = 7;
  EXPECT_TRUE(failsWith(mimo, "swa_num_key_value_heads",
                        "must divide swa_num_attention_heads"));
}

TEST(ModelConfigErrors, RotaryOdd) {
  json config = llamaBase();
  config["rotary_dim"] = 63;
  EXPECT_TRUE(failsWith(config, "rotary_dim", "must be even (got 63)"));
  // int(126 * 0.5) = 63.
  config = llamaBase();
  config["head_dim"] = 126;
  config["partial_rotary_factor"] = 0.5;
  EXPECT_TRUE(failsWith(config, "partial_rotary_factor", "must be even"));
  // Nested: Qwen3.5 keeps the factor in rope_parameters; 63/256 is exact.
  json qwen = exampleJson("qwen3.5-27b.json");
  qwen["text_config"]["rope_parameters"]["partial_rotary_factor"] = 63.0 / 256;
  EXPECT_TRUE(failsWith(qwen,
                        "text_config.rope_parameters.partial_rotary_factor",
                        "must be even (got 63 = int(256 * 0.24609375))"));
  qwen["text_config"]["rope_parameters"]["partial_rotary_factor"] = 0.004;
  EXPECT_TRUE(failsWith(qwen,
                        "text_config.rope_parameters.partial_rotary_factor",
                        "must be >= 2"));
  // MLA's rope part.
  json mla = exampleJson("deepseek-v3.json");
  mla["qk_rope_head_dim"] = 63;
  EXPECT_TRUE(failsWith(mla, "qk_rope_head_dim", "must be even"));
  // Whole-head rotary with an odd head dim.
  config = llamaBase();
  config["head_dim"] = 127;
  EXPECT_TRUE(failsWith(config, "head_dim", "must be even"));
}

TEST(ModelConfigErrors, RotaryTooLarge) {
  json config = llamaBase();
  config["rotary_dim"] = 256;
  EXPECT_TRUE(failsWith(config, "rotary_dim",
                        "must be <= the qk head dim 128 (got 256)"));
  config = llamaBase();
  config["partial_rotary_factor"] = 1.5;
  EXPECT_TRUE(failsWith(config, "partial_rotary_factor",
                        "must be <= the qk head dim 128"));
  config["partial_rotary_factor"] = 1e30; // no int64 overflow on the way
  EXPECT_TRUE(failsWith(config, "partial_rotary_factor", "must be <="));
  config["partial_rotary_factor"] = 1e300; // not a float32 at all
  EXPECT_TRUE(failsWith(config, "partial_rotary_factor",
                        "within float32's normal range"));
  config["partial_rotary_factor"] = 0;
  EXPECT_TRUE(failsWith(config, "partial_rotary_factor", "must be > 0"));
}

TEST(ModelConfigErrors, WrongTypes) {
  json config = llamaBase();
  config["num_attention_heads"] = "32";
  EXPECT_TRUE(failsWith(config, "num_attention_heads",
                        "must be an integer (got string \"32\")"));
  config["num_attention_heads"] = 32.5;
  EXPECT_TRUE(failsWith(config, "num_attention_heads",
                        "must be an integer (got 32.5)"));
  config["num_attention_heads"] = 32.0;
  EXPECT_TRUE(failsWith(config, "num_attention_heads",
                        "must be an integer (got 32.0)"));
  config["num_attention_heads"] = true;
  EXPECT_TRUE(failsWith(config, "num_attention_heads",
                        "must be an integer (got true)"));
  config["num_attention_heads"] = json::array({32});
  EXPECT_TRUE(failsWith(config, "num_attention_heads", "(got an array)"));

  config = llamaBase();
  config["rope_theta"] = "1e4";
  EXPECT_TRUE(failsWith(config, "rope_theta", "must be a number"));
  config = llamaBase();
  config["model_type"] = 7;
  EXPECT_TRUE(failsWith(config, "model_type", "must be a string"));
  config = llamaBase();
  config["rope_scaling"] = "linear";
  EXPECT_TRUE(failsWith(config, "rope_scaling", "must be an object"));
  config = llamaBase();
  config["torch_dtype"] = "int8";
  EXPECT_TRUE(failsWith(config, "torch_dtype", "unsupported dtype"));
  config = llamaBase();
  config["text_config"] = json::array();
  EXPECT_TRUE(failsWith(config, "text_config", "must be an object"));

  // Dotted paths inside text_config.
  json gemma = exampleJson("gemma-3-27b-it.json");
  gemma["text_config"]["num_key_value_heads"] = "16";
  EXPECT_TRUE(failsWith(gemma, "text_config.num_key_value_heads",
                        "must be an integer"));
  gemma = exampleJson("gemma-3-27b-it.json");
  gemma["text_config"]["rope_scaling"]["factor"] = false;
  EXPECT_TRUE(failsWith(gemma, "text_config.rope_scaling.factor",
                        "must be a number (got false)"));

  // Layer lists.
  json oss = exampleJson("gpt-oss-20b.json");
  oss["layer_types"][3] = 1;
  EXPECT_TRUE(failsWith(oss, "layer_types[3]", "must be a string"));
  oss = exampleJson("gpt-oss-20b.json");
  oss["layer_types"][5] = "chunked_attention";
  EXPECT_TRUE(failsWith(oss, "attention_chunk_size",
                        "required field is missing (the model has "
                        "chunked_attention layers)"));
  oss["layer_types"][5] = "hybrid_attention";
  EXPECT_TRUE(failsWith(oss, "layer_types[5]", "unsupported layer type"));
  oss = exampleJson("gpt-oss-20b.json");
  oss["layer_types"].erase(0);
  EXPECT_TRUE(failsWith(oss, "layer_types",
                        "must have num_hidden_layers (24) entries (got 23)"));
  json mimo = exampleJson("mimo-v2-flash.json");
  mimo["hybrid_layer_pattern"][2] = 2;
  EXPECT_TRUE(failsWith(mimo, "hybrid_layer_pattern[2]", "must be <= 1"));
}

TEST(ModelConfigErrors, UnsupportedOrInconsistentValues) {
  json config = llamaBase();
  config["rope_scaling"] = {{"rope_type", "proportional"}, {"factor", 4.0}};
  EXPECT_TRUE(failsWith(config, "rope_scaling.rope_type",
                        "unsupported rope scaling type \"proportional\""));
  config["rope_scaling"] = {{"rope_type", "longrope"}, {"factor", 4.0}};
  EXPECT_TRUE(failsWith(config, "rope_scaling.short_factor",
                        "required field is missing (rope scaling longrope)"));
  config["rope_scaling"] = {
      {"rope_type", "yarn"}, {"factor", 4.0}, {"attention_factor", -1.2}};
  EXPECT_TRUE(failsWith(config, "rope_scaling.attention_factor", "must be > 0"));
  config["rope_scaling"] = {{"rope_type", "llama3"},
                            {"factor", 8.0},
                            {"original_max_position_embeddings", 8192},
                            {"low_freq_factor", 4.0},
                            {"high_freq_factor", 2.0}};
  EXPECT_TRUE(failsWith(config, "rope_scaling.high_freq_factor",
                        "must be >= low_freq_factor"));
  // Equal factors (Llama 4): a step with no interpolation band, imported.
  config["rope_scaling"]["high_freq_factor"] = 4.0;
  {
    Result<ModelConfig> equal = importModelConfig(config.dump());
    ASSERT_TRUE(equal.ok()) << equal.status().message();
    EXPECT_EQ(equal->kinds[0].rope.scaling.low_freq_factor, 4.0);
    EXPECT_EQ(equal->kinds[0].rope.scaling.high_freq_factor, 4.0);
  }
  json mimo = exampleJson("mimo-v2-flash.json");
  mimo["sliding_window_size"] = 256;
  EXPECT_TRUE(
      failsWith(mimo, "sliding_window_size", "disagrees with sliding_window"));
  json next = exampleJson("qwen3-next-80b-a3b.json");
  next["full_attention_interval"] = 100;
  EXPECT_TRUE(failsWith(next, "full_attention_interval",
                        "no softmax attention layers"));
}

TEST(ModelConfigErrors, NotJson) {
  EXPECT_TRUE(
      failsWithText("{\"model_type\": \"llama\",, }", "<json>",
                    "not valid JSON: parse error at line 1, column 24"));
  EXPECT_TRUE(failsWithText("hello", "<json>", "not valid JSON"));
  EXPECT_TRUE(failsWithText("{\"a\": 1} trailing", "<json>", "line 1"));
  EXPECT_TRUE(failsWithText("{\n  \"a\": 1,\n  \"b\": \n}", "<json>",
                            "line 4, column 1"));
  EXPECT_TRUE(failsWithText("{\"a\": 1e999}", "<json>", "not valid JSON"));
  EXPECT_TRUE(failsWithText(std::string("{\"a\": \"\xff\"}"), "<json>",
                            "not valid JSON"));
  EXPECT_TRUE(failsWithText(std::string("{\"a\"\0: 1}", 9), "<json>",
                            "not valid JSON"));
  // Deep nesting is refused, not recursed into.
  std::string deep =
      "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_TRUE(failsWithText(deep, "<json>", "nested deeper than"));
}

TEST(ModelConfigErrors, EmptyInput) {
  EXPECT_TRUE(failsWithText("", "<json>", "empty input"));
  EXPECT_TRUE(failsWithText(" \n\t ", "<json>", "empty input"));
}

TEST(ModelConfigErrors, TopLevelNotObject) {
  EXPECT_TRUE(failsWithText("[{\"model_type\": \"llama\"}]", "<json>",
                            "top level must be a JSON object (got an array)"));
  EXPECT_TRUE(failsWithText("42", "<json>", "top level must be a JSON object"));
  EXPECT_TRUE(failsWithText("\"llama\"", "<json>", "(got string \"llama\")"));
  EXPECT_TRUE(failsWithText("null", "<json>", "(got null)"));
}

TEST(ModelConfigErrors, Files) {
  const std::string missing =
      (fs::path(::testing::TempDir()) / "attnc-no-such-config.json").string();
  Result<ModelConfig> result = importModelConfigFile(missing);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().field, missing);
  EXPECT_NE(result.error().rule.find("cannot read file"), std::string::npos);

  result = importModelConfigFile(::testing::TempDir());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().field, ::testing::TempDir());
  EXPECT_NE(result.error().rule.find("cannot read file"), std::string::npos);

  TempFile empty("attnc-empty-config.json", "");
  result = importModelConfigFile(empty.path());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().field, empty.path());
  EXPECT_EQ(result.error().rule, "file is empty");

  TempFile broken("attnc-broken-config.json", "{\"model_type\": ");
  result = importModelConfigFile(broken.path());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().field, "<json>");

  TempFile good("attnc-good-config.json", llamaBase().dump());
  result = importModelConfigFile(good.path());
  EXPECT_TRUE(result.ok());

  // A device is refused, not read forever; so is a FIFO (readFile's tests
  // check that it does not wait for a writer).
  result = importModelConfigFile("/dev/zero");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().rule,
            "cannot read file: not a regular file (a character device)");
}

/// The CLI's lit inputs give the errors their README promises.
TEST(ModelConfigErrors, LitInputs) {
  const fs::path dir = litInputsDir();
  if (!fs::is_directory(dir))
    GTEST_SKIP() << "no lit inputs at " << dir;
  const std::pair<const char *, const char *> kExpected[] = {
      {"bad-missing-field.json", "num_attention_heads"},
      {"bad-zero-heads.json", "num_attention_heads"},
      {"bad-negative-heads.json", "num_key_value_heads"},
      {"bad-gqa-indivisible.json", "num_key_value_heads"},
      {"bad-rotary-odd.json", "rotary_dim"},
      {"bad-rotary-too-large.json", "rotary_dim"},
      {"bad-wrong-type.json", "num_attention_heads"},
      {"bad-not-json.json", "<json>"},
      {"bad-empty.json", ""}, // the path
      {"bad-unknown-model-ambiguous.json", "model_type"},
      {"bad-top-level-array.json", "<json>"},
  };
  for (const auto &[file, field] : kExpected) {
    const std::string path = (dir / file).string();
    SCOPED_TRACE(path);
    Result<ModelConfig> result = importModelConfigFile(path);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().field, *field ? std::string(field) : path);
  }
  EXPECT_EQ(fs::file_size(dir / "bad-empty.json"), 0u);
}

//===----------------------------------------------------------------------===//
// The attnc spec form
//===----------------------------------------------------------------------===//

json minimalSpec() {
  return json::parse(R"({
    "attnc_spec": 1,
    "_comment": "keys starting with _ are ignored",
    "model_type": "toy",
    "num_layers": 4,
    "layer_kinds": [
      {"name": "full_attention", "layers": [0, 2], "num_q_heads": 8,
       "qk_head_dim": 64, "qk_norm": "none", "rope": {"style": "neox"}},
      {"name": "sliding_attention", "layers": [1, 3], "num_q_heads": 8,
       "num_kv_heads": 2, "qk_head_dim": 64, "v_head_dim": 32,
       "gate": "interleaved", "qk_norm": "gemma", "sliding_window": 64,
       "sinks": true,
       "rope": {"style": "gptj", "rotary_dim": 32, "rotary_offset": 32,
                "theta": 1e6, "scaling": {"kind": "yarn", "factor": 4,
                "original_max_position": 4096, "truncate": false}}}
    ]
  })");
}

TEST(ModelConfigSpec, Defaults) {
  IMPORT_TEXT(c, minimalSpec().dump());
  EXPECT_EQ(c.model_type, "toy");
  EXPECT_EQ(c.dtype, "bf16");
  EXPECT_EQ(c.max_position_embeddings, 0);
  ASSERT_EQ(c.kinds.size(), 2u);
  const LayerKind &a = c.kinds[0];
  expectHeads(a, 8, 8, 64, 64);
  EXPECT_EQ(a.rope.rotary_dim, 64);
  EXPECT_DOUBLE_EQ(a.rope.theta, 10000.0);
  EXPECT_DOUBLE_EQ(a.softmax_scale, 0.125);
  EXPECT_DOUBLE_EQ(a.norm_eps, 1e-6);
  EXPECT_TRUE(a.norm_before_rope);
  const LayerKind &b = c.kinds[1];
  expectHeads(b, 8, 2, 64, 32, GateLayout::InterleavedWithQ);
  EXPECT_EQ(b.qk_norm, NormStyle::Gemma);
  EXPECT_EQ(b.rope.style, RopeStyle::Gptj);
  EXPECT_EQ(b.rope.rotary_offset, 32);
  EXPECT_EQ(b.rope.scaling.kind, RopeScalingKind::Yarn);
  EXPECT_FALSE(b.rope.scaling.truncate);
  EXPECT_EQ(b.sliding_window, 64);
  EXPECT_TRUE(b.sinks);
}

TEST(ModelConfigSpec, HandBuiltRoundTrip) {
  ModelConfig c;
  c.model_type = "hand \"built\"";
  c.dtype = "fp16";
  c.num_layers = 3;
  c.max_position_embeddings = 4096;
  LayerKind k;
  k.name = "odd_kind_1";
  k.layers = {0, 2};
  k.heads = {12, 4, 80, 48, GateLayout::Concatenated};
  k.qk_norm = NormStyle::Plain;
  k.norm_eps = 1.0 / 3.0;
  k.norm_before_rope = false;
  k.rope.style = RopeStyle::Neox;
  k.rope.rotary_dim = 40;
  k.rope.rotary_offset = 8;
  k.rope.theta = 12345.678901234567;
  k.rope.scaling.kind = RopeScalingKind::Llama3;
  k.rope.scaling.factor = 0.1;
  k.rope.scaling.original_max_position = 2048;
  k.rope.scaling.low_freq_factor = 1.5;
  k.rope.scaling.high_freq_factor = 3.25;
  k.sliding_window = 7;
  k.sinks = true;
  k.softmax_scale = 0.0; // "default" survives as is
  k.logit_softcap = 30.0;
  k.value_scale = 0.707;
  c.kinds.push_back(k);
  LayerKind none;
  none.name = "norope";
  none.layers = {1};
  none.heads = {2, 1, 16, 16, GateLayout::None};
  none.softmax_scale = 0.3;
  c.kinds.push_back(none);
  std::string spec = toSpecJson(c);
  IMPORT_TEXT(again, spec);
  EXPECT_EQ(difference(c, again), "") << spec;
}

/// A DeepSeek-V3-shaped MLA kind in the spec form.
json mlaSpec() {
  return json::parse(R"({
    "attnc_spec": 1, "model_type": "toy_mla", "num_layers": 2,
    "layer_kinds": [
      {"name": "full_attention", "layers": [0, 1], "num_q_heads": 16,
       "qk_head_dim": 192, "v_head_dim": 128, "qk_norm": "none",
       "rope": {"style": "gptj", "rotary_dim": 64, "rotary_offset": 128},
       "mla": {"kv_lora_rank": 512}}
    ]
  })");
}

TEST(ModelConfigSpec, MlaDefaultsAndRoundTrip) {
  IMPORT_TEXT(c, mlaSpec().dump());
  const LayerKind &k = c.kinds[0];
  ASSERT_TRUE(k.mla.has_value());
  EXPECT_EQ(k.mla->kv_lora_rank, 512);
  EXPECT_EQ(k.mla->kv_norm_eps, 1e-6);
  EXPECT_EQ(k.mla->latent_scale, 1.0);
  EXPECT_FALSE(k.mla->rope_deinterleave);
  EXPECT_EQ(k.mla->block_size, 64);
  expectHeads(k, 16, 16, 192, 128); // num_kv_heads defaults to Hq

  // Every field set away from its default survives, doubles exactly.
  ModelConfig hand = c;
  hand.kinds[0].mla->kv_norm_eps = 1.0 / 7.0;
  hand.kinds[0].mla->latent_scale = std::sqrt(12.0);
  hand.kinds[0].mla->rope_deinterleave = true;
  hand.kinds[0].mla->block_size = 16;
  std::string spec = toSpecJson(hand);
  IMPORT_TEXT(again, spec);
  EXPECT_EQ(difference(hand, again), "") << spec;
  EXPECT_EQ(toSpecJson(again), spec);

  // A kind without MLA writes no mla key, so earlier specs are unchanged.
  EXPECT_NE(spec.find("\"mla\""), std::string::npos);
  IMPORT_TEXT(plain, minimalSpec().dump());
  EXPECT_EQ(toSpecJson(plain).find("\"mla\""), std::string::npos);
  EXPECT_FALSE(plain.kinds[0].mla.has_value());
}

TEST(ModelConfigSpec, MlaErrors) {
  const std::string kind = "layer_kinds[0].";
  json spec = mlaSpec();
  spec["layer_kinds"][0]["mla"].erase("kv_lora_rank");
  EXPECT_TRUE(failsWith(spec, kind + "mla.kv_lora_rank",
                        "required field is missing"));

  spec = mlaSpec();
  spec["layer_kinds"][0]["mla"]["kv_lora_rank"] = 0;
  EXPECT_TRUE(failsWith(spec, kind + "mla.kv_lora_rank", "must be >= 1"));

  spec = mlaSpec();
  spec["layer_kinds"][0]["mla"]["kv_lora"] = 512; // typo
  EXPECT_TRUE(failsWith(spec, kind + "mla.kv_lora", "unknown key"));

  spec = mlaSpec();
  spec["layer_kinds"][0]["mla"]["block_size"] = 32;
  EXPECT_TRUE(failsWith(spec, kind + "mla.block_size", "must be 16 or 64"));

  spec = mlaSpec();
  spec["layer_kinds"][0]["mla"]["latent_scale"] = 0;
  EXPECT_TRUE(failsWith(spec, kind + "mla.latent_scale", "must be > 0"));

  spec = mlaSpec();
  spec["layer_kinds"][0]["mla"]["kv_norm_eps"] = -1e-6;
  EXPECT_TRUE(failsWith(spec, kind + "mla.kv_norm_eps", "must be > 0"));

  spec = mlaSpec();
  spec["layer_kinds"][0]["num_kv_heads"] = 1;
  EXPECT_TRUE(failsWith(spec, kind + "num_kv_heads",
                        "must equal num_q_heads 16 (got 1)"));

  spec = mlaSpec();
  spec["layer_kinds"][0]["rope"] = {{"style", "none"}};
  EXPECT_TRUE(failsWith(spec, kind + "rope.style", "for an MLA kind"));

  spec = mlaSpec();
  spec["layer_kinds"][0]["rope"]["rotary_dim"] = 32; // 128 + 32 != 192
  EXPECT_TRUE(failsWith(spec, kind + "rope.rotary_offset",
                        "rotary_offset + rotary_dim must equal qk_head_dim "
                        "192 (got 128 + 32)"));

  spec = mlaSpec();
  spec["layer_kinds"][0]["rope"]["rotary_offset"] = 0;
  spec["layer_kinds"][0]["rope"]["rotary_dim"] = 192;
  EXPECT_TRUE(failsWith(spec, kind + "rope.rotary_offset",
                        "must be >= 1 for an MLA kind"));

  spec = mlaSpec();
  spec["layer_kinds"][0]["rope"]["style"] = "neox";
  spec["layer_kinds"][0]["mla"]["rope_deinterleave"] = true;
  EXPECT_TRUE(failsWith(spec, kind + "mla.rope_deinterleave",
                        "needs rope.style \"gptj\""));

  // What the latent kernels have no form for, one key at a time.
  const std::vector<std::pair<std::string, json>> unsupported = {
      {"gate", "qkvg"},
      {"qk_norm", "rms"},
      {"sliding_window", 128},
      {"attention_chunk", 8192},
      {"sinks", true},
      {"logit_softcap", 30.0},
      {"value_scale", 0.5},
      {"query_temperature", {{"floor_scale", 8192.0}, {"scale", 0.1}}}};
  for (const auto &[key, value] : unsupported) {
    spec = mlaSpec();
    spec["layer_kinds"][0][key] = value;
    EXPECT_TRUE(failsWith(spec, kind + key, "is not supported in an MLA kind"))
        << key;
  }
}

TEST(ModelConfigSpec, Errors) {
  json spec = minimalSpec();
  spec["attnc_spec"] = 2;
  EXPECT_TRUE(failsWith(spec, "attnc_spec", "unsupported spec version 2"));

  spec = minimalSpec();
  spec["layer_kinds"][0]["num_kv_head"] = 2; // typo
  EXPECT_TRUE(failsWith(spec, "layer_kinds[0].num_kv_head", "unknown key"));

  spec = minimalSpec();
  spec["layer_kinds"][0].erase("qk_norm");
  EXPECT_TRUE(
      failsWith(spec, "layer_kinds[0].qk_norm", "required field is missing"));

  spec = minimalSpec();
  spec["layer_kinds"][0]["rope"].erase("style");
  EXPECT_TRUE(failsWith(spec, "layer_kinds[0].rope.style", "required"));

  spec = minimalSpec();
  spec["layer_kinds"][1]["num_kv_heads"] = 3;
  EXPECT_TRUE(failsWith(spec, "layer_kinds[1].num_kv_heads", "must divide"));

  spec = minimalSpec();
  spec["layer_kinds"][0]["num_q_heads"] = 0;
  EXPECT_TRUE(failsWith(spec, "layer_kinds[0].num_q_heads", "must be >= 1"));

  spec = minimalSpec();
  spec["layer_kinds"][1]["layers"] = {1, 2};
  EXPECT_TRUE(
      failsWith(spec, "layer_kinds[1].layers[1]", "already in layer_kinds[0]"));

  spec = minimalSpec();
  spec["layer_kinds"][1]["layers"] = {3, 1};
  EXPECT_TRUE(
      failsWith(spec, "layer_kinds[1].layers[1]", "strictly ascending"));

  spec = minimalSpec();
  spec["layer_kinds"][1]["layers"] = {1, 4};
  EXPECT_TRUE(failsWith(spec, "layer_kinds[1].layers[1]", "must be <= 3"));

  spec = minimalSpec();
  spec["layer_kinds"][1]["name"] = "full_attention";
  EXPECT_TRUE(failsWith(spec, "layer_kinds[1].name", "duplicate"));

  spec = minimalSpec();
  spec["layer_kinds"][1]["name"] = "sliding-attention";
  EXPECT_TRUE(failsWith(spec, "layer_kinds[1].name", "identifier"));

  spec = minimalSpec();
  spec["layer_kinds"][1]["rope"]["rotary_dim"] = 48; // 32 + 48 > 64
  EXPECT_TRUE(failsWith(spec, "layer_kinds[1].rope.rotary_dim",
                        "must be <= the qk head dim 64"));

  spec = minimalSpec();
  spec["layer_kinds"][1]["rope"]["rotary_dim"] = 31;
  EXPECT_TRUE(
      failsWith(spec, "layer_kinds[1].rope.rotary_dim", "must be even"));

  spec = minimalSpec();
  spec["layer_kinds"][0]["rope"] = {{"style", "none"}, {"rotary_dim", 64}};
  EXPECT_TRUE(failsWith(spec, "layer_kinds[0].rope.rotary_dim",
                        "must be 0 when style is \"none\""));

  spec = minimalSpec();
  spec["layer_kinds"][1]["gate"] = "after";
  EXPECT_TRUE(failsWith(spec, "layer_kinds[1].gate", "must be \"none\""));

  spec = minimalSpec();
  spec["layer_kinds"][1]["rope"]["scaling"]["kind"] = "ntk";
  EXPECT_TRUE(
      failsWith(spec, "layer_kinds[1].rope.scaling.kind", "must be \"none\""));

  spec = minimalSpec();
  spec["layer_kinds"][1]["rope"]["scaling"].erase("original_max_position");
  EXPECT_TRUE(failsWith(spec,
                        "layer_kinds[1].rope.scaling.original_max_position",
                        "required for rope scaling yarn"));

  spec = minimalSpec();
  spec["layer_kinds"] = json::array();
  EXPECT_TRUE(failsWith(spec, "layer_kinds", "at least one"));

  spec = minimalSpec();
  spec["dtype"] = "bfloat16";
  EXPECT_TRUE(failsWith(spec, "dtype", "must be \"bf16\""));

  spec = minimalSpec();
  spec["layer_kinds"][0]["sinks"] = "yes";
  EXPECT_TRUE(failsWith(spec, "layer_kinds[0].sinks", "must be true or false"));
}

TEST(ModelConfigNames, Spellings) {
  EXPECT_STREQ(normStyleName(NormStyle::None), "none");
  EXPECT_STREQ(normStyleName(NormStyle::Plain), "rms");
  EXPECT_STREQ(normStyleName(NormStyle::Gemma), "gemma");
  EXPECT_STREQ(ropeStyleName(RopeStyle::None), "none");
  EXPECT_STREQ(ropeStyleName(RopeStyle::Neox), "neox");
  EXPECT_STREQ(ropeStyleName(RopeStyle::Gptj), "gptj");
  EXPECT_STREQ(ropeScalingKindName(RopeScalingKind::None), "none");
  EXPECT_STREQ(ropeScalingKindName(RopeScalingKind::Linear), "linear");
  EXPECT_STREQ(ropeScalingKindName(RopeScalingKind::Llama3), "llama3");
  EXPECT_STREQ(ropeScalingKindName(RopeScalingKind::Yarn), "yarn");
  EXPECT_STREQ(ropeScalingKindName(RopeScalingKind::DynamicNtk), "dynamic");
}

} // namespace

//===----------------------------------------------------------------------===//
// What the kernels can represent, checked at import (hardening)
//===----------------------------------------------------------------------===//

TEST(ModelConfigLimits, NumbersMustBeNormalFloat32) {
  for (double bad : {1e-50, 1e308, -1e39, 1e-39}) {
    json config = llamaBase();
    config["rms_norm_eps"] = bad;
    EXPECT_TRUE(failsWith(config, "rms_norm_eps",
                          "within float32's normal range")) << bad;
    config = llamaBase();
    config["rope_theta"] = bad;
    EXPECT_TRUE(failsWith(config, "rope_theta",
                          "within float32's normal range")) << bad;
  }
  // The range's ends are float32 values and pass.
  json config = llamaBase();
  config["rms_norm_eps"] = double(std::numeric_limits<float>::min());
  EXPECT_TRUE(importModelConfig(config.dump()).ok());

  json spec = minimalSpec();
  spec["layer_kinds"][0]["softmax_scale"] = 1e39;
  EXPECT_TRUE(failsWith(spec, "layer_kinds[0].softmax_scale",
                        "it becomes a float constant"));
  spec = minimalSpec();
  spec["layer_kinds"][1]["logit_softcap"] = 1e300;
  EXPECT_TRUE(failsWith(spec, "layer_kinds[1].logit_softcap",
                        "within float32's normal range"));
}

TEST(ModelConfigLimits, DerivedSoftmaxScaleMustBeAFloat32) {
  // Each input is in range; DeepSeek's mscale squared is not.
  json config = exampleJson("deepseek-v3.json");
  config["rope_scaling"]["mscale_all_dim"] = 1e30;
  EXPECT_TRUE(failsWith(config, "rope_scaling", "gives a softmax scale that"));
}

TEST(ModelConfigLimits, HeadDimsWithinWhatTheKernelsTake) {
  json config = llamaBase();
  config["head_dim"] = 512;
  EXPECT_TRUE(importModelConfig(config.dump()).ok());
  config["head_dim"] = 513; // pads to 528
  EXPECT_TRUE(failsWith(config, "head_dim", "must be in [1, 512]"));
  config["head_dim"] = 100000;
  EXPECT_TRUE(failsWith(config, "head_dim", "got 100000"));
  json spec = minimalSpec();
  spec["layer_kinds"][1]["v_head_dim"] = 600;
  EXPECT_TRUE(failsWith(spec, "layer_kinds[1].v_head_dim", "must be in [1, 512]"));
}

TEST(ModelConfigLimits, DuplicateKeysAreRefused) {
  EXPECT_TRUE(failsWithText(
      R"({"model_type": "llama", "num_attention_heads": 4, "num_attention_heads": 8})",
      "num_attention_heads", "duplicate key"));
  EXPECT_TRUE(failsWithText(
      R"({"model_type": "llama", "rope_scaling": {"factor": 2, "factor": 4}})",
      "rope_scaling.factor", "duplicate key"));
}
