//===- HfFamiliesTest.cpp - The family table and every family's config ----===//
//
// The family table (model/families/hf-families.json) parses and validates;
// a malformed row is refused naming the row and the key; every model type of
// the transformers 5.24 reference (/work/shared/reference/hf-attention.md,
// 67 rows) is in the table and has a config in test/model/configs/hf; each
// config imports into the attention its family's code computes, or is
// refused naming the unsupported feature. The expected values below are
// derived from the reference's rules and each config's numbers (the comment
// on each entry says how), not from the importer's output.
//
//===----------------------------------------------------------------------===//

#include "HfFamilies.h"

#include "attnc/Model/ModelConfig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#ifndef ATTNC_HF_CONFIGS_DIR
#define ATTNC_HF_CONFIGS_DIR "test/model/configs/hf"
#endif

namespace attnc {
namespace {

using config_import::FamilyRules;
using config_import::familyOf;
using config_import::familyTable;
using config_import::familyTableText;
using config_import::parseFamilyTable;
using json = nlohmann::json;

std::string configPath(const std::string &file) {
  return std::string(ATTNC_HF_CONFIGS_DIR) + "/" + file;
}

std::vector<int64_t> every(int64_t first, int64_t step, int64_t end) {
  std::vector<int64_t> out;
  for (int64_t i = first; i < end; i += step)
    out.push_back(i);
  return out;
}

/// [0, n) without `except`.
std::vector<int64_t> allBut(int64_t n, const std::vector<int64_t> &except) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i)
    if (std::find(except.begin(), except.end(), i) == except.end())
      out.push_back(i);
  return out;
}

double inverseSqrt(double x) { return 1.0 / std::sqrt(x); }

/// DeepSeek's yarn_get_mscale(factor, mscale_all_dim), squared.
double mscaleSquared(double factor, double all_dim) {
  double m = 0.1 * all_dim * std::log(factor) + 1.0;
  return m * m;
}

//===----------------------------------------------------------------------===//
// The table itself
//===----------------------------------------------------------------------===//

TEST(FamilyTable, EmbeddedTableParses) {
  const Result<std::vector<FamilyRules>> &table = familyTable();
  ASSERT_TRUE(table.ok()) << table.error().message();
  EXPECT_GE(table->size(), 40u);
  // Embedded, not read from a file: the text is in the library.
  EXPECT_NE(familyTableText().find("\"families\""), std::string_view::npos);
}

/// The 67 model types of the transformers 5.24 reference table.
const std::vector<std::string> kReferenceTypes = {
    "llama", "mistral", "ministral", "ministral3", "mixtral", "qwen2",
    "qwen2_moe", "qwen3", "qwen3_moe", "qwen3_next", "qwen3_5", "qwen3_5_moe",
    "gemma", "gemma2", "gemma3_text", "gemma4_text", "vaultgemma", "glm",
    "glm4", "glm4_moe", "glm4_moe_lite", "phi3", "phimoe", "phi",
    "deepseek_v2", "deepseek_v3", "deepseek_v32", "mistral4", "kimi_linear",
    "longcat_flash", "bailing_hybrid", "ernie4_5", "ernie4_5_moe", "gpt_oss",
    "olmo2", "olmo3", "olmoe", "cohere", "cohere2", "granite", "granitemoe",
    "granitemoehybrid", "starcoder2", "falcon", "minimax", "minimax_m2",
    "hunyuan_v1_dense", "hunyuan_v1_moe", "hy_v3", "seed_oss", "exaone4",
    "smollm3", "llama4_text", "mimo_v2_flash", "apertus", "arcee", "dots1",
    "afmoe", "laguna", "lfm2", "gpt_neox", "stablelm", "persimmon", "nemotron",
    "minicpm3", "helium", "cwm"};

TEST(FamilyTable, EveryReferenceTypeIsInTheTable) {
  ASSERT_EQ(kReferenceTypes.size(), 67u);
  for (const std::string &type : kReferenceTypes)
    EXPECT_NE(familyOf(type), nullptr) << type;
  EXPECT_EQ(familyOf("not_a_family"), nullptr);
}

/// A one-row table with `row` spliced in.
std::string tableWith(const std::string &row) {
  return "{\"families\": [{\"model_types\": [\"a\"]}, " + row + "]}";
}

void expectTableError(const std::string &text, const std::string &field,
                      const std::string &rule_part) {
  Result<std::vector<FamilyRules>> table = parseFamilyTable(text);
  ASSERT_FALSE(table.ok()) << "parsed: " << text;
  EXPECT_EQ(table.error().field, field) << table.error().message();
  EXPECT_NE(table.error().rule.find(rule_part), std::string::npos)
      << table.error().message();
}

TEST(FamilyTable, MalformedRowsNameTheRowAndKey) {
  expectTableError(tableWith(R"({"model_types": ["b"], "rope": {"style": "half"}})"),
                   "families[1].rope.style", "must be one of");
  expectTableError(tableWith(R"({"model_types": ["b"], "qk_norms": {}})"),
                   "families[1].qk_norms", "unknown");
  expectTableError(tableWith(R"({"model_types": ["a"]})"),
                   "families[1].model_types", "already in an earlier row");
  expectTableError(tableWith(R"({"model_types": []})"),
                   "families[1].model_types", "non-empty");
  expectTableError(
      tableWith(R"({"model_types": ["b"], "qk_norm": {"style": "rms", "bias": true}})"),
      "families[1].qk_norm.bias", "needs style \"layernorm\"");
  expectTableError(
      tableWith(R"({"model_types": ["b"], "layers": {"rule": "every_nth_full"}})"),
      "families[1].layers.default", "required by this rule");
  expectTableError(
      tableWith(R"({"model_types": ["b"], "refuse": [{"when": "true", "feature": "x"}]})"),
      "families[1].refuse[0].keys", "required unless");
  expectTableError(
      tableWith(R"({"model_types": ["b"], "gate": {"layout": "sideways"}})"),
      "families[1].gate.layout", "must be");
  expectTableError(
      tableWith(R"({"model_types": ["b"], "query_temperature": {}})"),
      "families[1].query_temperature", "needs rope.nope");
  expectTableError("{\"families\": 3}", "families", "must be an array");
}

//===----------------------------------------------------------------------===//
// Every family's config
//===----------------------------------------------------------------------===//

/// What one layer kind must be. Fields left at their defaults are checked
/// too (no norm, no gate, ...).
struct KindExpect {
  std::string name;
  std::vector<int64_t> layers;
  int64_t hq, hkv, dqk, dv;
  NormStyle norm;
  RopeStyle rope;
  int64_t rotary_dim, rotary_offset;
  double theta;
  int64_t window;
  double scale;
  NormScope scope = NormScope::Head;
  bool norm_bias = false, norm_before_rope = true, sinks = false;
  GateLayout gate = GateLayout::None;
  double softcap = 0.0, value_scale = 1.0;
  RopeScalingKind scaling = RopeScalingKind::None;
  /// Llama 4: the query temperature's floor_scale (0: none), the chunk.
  double temperature_floor_scale = 0.0;
  int64_t attention_chunk = 0;
  /// MLA's latent form: kv_lora_rank (0: no latent, the decompressed or
  /// ordinary form), the latent scale and the halves-order rope output.
  int64_t kv_lora_rank = 0;
  double latent_scale = 1.0;
  bool rope_deinterleave = false;
};

struct FamilyExpect {
  std::string file;
  int64_t num_layers = 0;
  std::vector<KindExpect> kinds;
  /// Non-empty: the config is refused and the message contains this.
  std::string refused;
};

KindExpect kind(std::string name, std::vector<int64_t> layers, int64_t hq,
                int64_t hkv, int64_t dqk, int64_t dv, NormStyle norm,
                RopeStyle rope, int64_t rotary, int64_t offset, double theta,
                int64_t window = 0, double scale = 0) {
  return KindExpect{std::move(name), std::move(layers), hq,     hkv,
                    dqk,             dv,                norm,   rope,
                    rotary,          offset,            theta,  window,
                    scale == 0 ? inverseSqrt(double(dqk)) : scale};
}

template <typename F> KindExpect with(KindExpect k, F change) {
  change(k);
  return k;
}

constexpr NormStyle kNoNorm = NormStyle::None;
constexpr NormStyle kRms = NormStyle::Plain;
constexpr NormStyle kGemma = NormStyle::Gemma;
constexpr NormStyle kLayerNorm = NormStyle::LayerNorm;
constexpr RopeStyle kNeox = RopeStyle::Neox;
constexpr RopeStyle kGptj = RopeStyle::Gptj;
constexpr RopeStyle kNoRope = RopeStyle::None;

std::vector<FamilyExpect> expectations() {
  const auto full = [](std::vector<int64_t> layers, int64_t hq, int64_t hkv,
                       int64_t d, NormStyle norm, RopeStyle rope,
                       int64_t rotary, double theta) {
    return kind("full_attention", std::move(layers), hq, hkv, d, d, norm, rope,
                rotary, 0, theta);
  };
  std::vector<FamilyExpect> e;
  // llama / arcee / seed_oss: no norm, neox over the head, all layers full.
  e.push_back({"llama-3.1-8b-instruct.json", 32,
               {with(full(every(0, 1, 32), 32, 8, 128, kNoNorm, kNeox, 128, 5e5),
                     [](KindExpect &k) { k.scaling = RopeScalingKind::Llama3; })}});
  e.push_back({"arcee.json", 36,
               {with(full(every(0, 1, 36), 20, 4, 128, kNoNorm, kNeox, 128, 1e4),
                     [](KindExpect &k) { k.scaling = RopeScalingKind::Yarn; })}});
  e.push_back({"seed_oss.json", 64,
               {full(every(0, 1, 64), 80, 8, 128, kNoNorm, kNeox, 128, 1e7)}});
  // mistral family: a null sliding_window leaves every layer full; a set
  // one slides every layer.
  e.push_back({"mistral-7b-instruct-v0.3.json", 32,
               {full(every(0, 1, 32), 32, 8, 128, kNoNorm, kNeox, 128, 1e6)}});
  e.push_back({"mixtral.json", 32,
               {full(every(0, 1, 32), 32, 8, 128, kNoNorm, kNeox, 128, 1e6)}});
  e.push_back({"starcoder2.json", 40,
               {kind("sliding_attention", every(0, 1, 40), 48, 4, 128, 128,
                     kNoNorm, kNeox, 128, 0, 1e5, 4096)}});
  e.push_back({"ministral.json", 36,
               {kind("sliding_attention", every(0, 1, 36), 32, 8, 128, 128,
                     kNoNorm, kNeox, 128, 0, 1e8, 32768)}});
  e.push_back({"ministral3.json", 0, {}, "Ministral 3 query temperature"});
  // phi3: 3072 / 24 = 128, partial 0.75 -> 96, longrope, window 262144.
  e.push_back({"phi3.json", 32,
               {with(kind("sliding_attention", every(0, 1, 32), 24, 8, 128, 128,
                          kNoNorm, kNeox, 96, 0, 1e4, 262144),
                     [](KindExpect &k) { k.scaling = RopeScalingKind::LongRope; })}});
  e.push_back({"phimoe.json", 32,
               {with(kind("sliding_attention", every(0, 1, 32), 32, 8, 128, 128,
                          kNoNorm, kNeox, 128, 0, 1e4, 131072),
                     [](KindExpect &k) { k.scaling = RopeScalingKind::LongRope; })}});
  // qwen2: use_sliding_window false -> all full; hidden 3584 / 28 = 128.
  e.push_back({"qwen2.json", 28,
               {full(every(0, 1, 28), 28, 4, 128, kNoNorm, kNeox, 128, 1e6)}});
  e.push_back({"qwen2_moe.json", 24,
               {full(every(0, 1, 24), 16, 16, 128, kNoNorm, kNeox, 128, 1e6)}});
  e.push_back({"qwen3-8b.json", 36,
               {full(every(0, 1, 36), 32, 8, 128, kRms, kNeox, 128, 1e6)}});
  e.push_back({"qwen3_moe.json", 48,
               {full(every(0, 1, 48), 32, 4, 128, kRms, kNeox, 128, 1e6)}});
  e.push_back({"dots1.json", 62,
               {full(every(0, 1, 62), 32, 32, 128, kRms, kNeox, 128, 1e7)}});
  // qwen3_next / qwen3_5: every 4th layer (3, 7, ...) is gated attention,
  // partial 0.25 of 256 = 64.
  for (auto [file, n, hq, hkv] :
       std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>>{
           {"qwen3-next-80b-a3b.json", 48, 16, 2},
           {"qwen3.5-27b.json", 64, 24, 4},
           {"qwen3_5_moe.json", 40, 16, 2}})
    e.push_back({file, n,
                 {with(full(every(3, 4, n), hq, hkv, 256, kGemma, kNeox, 64, 1e7),
                       [](KindExpect &k) {
                         k.gate = GateLayout::InterleavedWithQ;
                       })}});
  // gemma: head_dim 256. gemma2 / vaultgemma: even layers slide,
  // query_pre_attn_scalar 256 -> 1/16, soft-cap 50.
  e.push_back({"gemma.json", 28,
               {full(every(0, 1, 28), 16, 16, 256, kNoNorm, kNeox, 256, 1e4)}});
  for (auto [file, n, hq, hkv, window] :
       std::vector<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>>{
           {"gemma2.json", 42, 16, 8, 4096}, {"vaultgemma.json", 26, 4, 4, 512}})
    e.push_back(
        {file, n,
         {with(full(every(1, 2, n), hq, hkv, 256, kNoNorm, kNeox, 256, 1e4),
               [](KindExpect &k) { k.softcap = 50; }),
          with(kind("sliding_attention", every(0, 2, n), hq, hkv, 256, 256,
                    kNoNorm, kNeox, 256, 0, 1e4, window),
               [](KindExpect &k) { k.softcap = 50; })}});
  // gemma 3 27B: (i+1) % 6 == 0 full; query_pre_attn_scalar 168; local
  // layers theta 1e4 unscaled, global ones rope_scaling linear 8.
  e.push_back(
      {"gemma-3-27b-it.json", 62,
       {with(kind("full_attention", every(5, 6, 62), 32, 16, 128, 128, kGemma,
                  kNeox, 128, 0, 1e6, 0, inverseSqrt(168)),
             [](KindExpect &k) { k.scaling = RopeScalingKind::Linear; }),
        kind("sliding_attention", allBut(62, every(5, 6, 62)), 32, 16, 128, 128,
             kGemma, kNeox, 128, 0, 1e4, 1024, inverseSqrt(168))}});
  e.push_back({"gemma4.json", 0, {}, "v_norm"});
  // glm / glm4: gptj on the first half of 128.
  e.push_back({"glm.json", 40,
               {full(every(0, 1, 40), 32, 2, 128, kNoNorm, kGptj, 64, 1e4)}});
  e.push_back({"glm4.json", 40,
               {full(every(0, 1, 40), 32, 2, 128, kNoNorm, kGptj, 64, 1e4)}});
  e.push_back({"glm4_moe.json", 92,
               {full(every(0, 1, 92), 96, 8, 128, kRms, kNeox, 64, 1e6)}});
  // MLA, latent form: the decompressed heads (Hkv = Hq, Dqk = nope + rope,
  // rope over the last qk_rope_head_dim dims) plus the latent (kv_lora_rank,
  // de-interleaved gptj output where transformers uses
  // apply_rotary_pos_emb_interleave).
  auto latent = [](int64_t rank, bool deinterleave) {
    return [=](KindExpect &k) {
      k.kv_lora_rank = rank;
      k.rope_deinterleave = deinterleave;
    };
  };
  e.push_back(
      {"deepseek-v3.json", 61,
       {with(kind("full_attention", every(0, 1, 61), 128, 128, 192, 128,
                  kNoNorm, kGptj, 64, 128, 1e4, 0,
                  inverseSqrt(192) * mscaleSquared(40, 1.0)),
             [&](KindExpect &k) {
               k.scaling = RopeScalingKind::Yarn;
               latent(512, true)(k);
             })}});
  // DeepSeek-V2: the complex product rotates pairs in place.
  e.push_back(
      {"deepseek_v2.json", 27,
       {with(kind("full_attention", every(0, 1, 27), 16, 16, 192, 128, kNoNorm,
                  kGptj, 64, 128, 1e4, 0,
                  inverseSqrt(192) * mscaleSquared(40, 0.707)),
             [&](KindExpect &k) {
               k.scaling = RopeScalingKind::Yarn;
               latent(512, false)(k);
             })}});
  e.push_back({"deepseek_v32.json", 0, {}, "sparse attention indexer"});
  e.push_back(
      {"mistral4.json", 36,
       {with(kind("full_attention", every(0, 1, 36), 32, 32, 128, 128, kNoNorm,
                  kGptj, 64, 64, 1e4, 0,
                  inverseSqrt(128) * mscaleSquared(128, 1.0)),
             [&](KindExpect &k) {
               k.scaling = RopeScalingKind::Yarn;
               latent(256, true)(k);
             })}});
  e.push_back({"glm4_moe_lite.json", 47,
               {with(kind("full_attention", every(0, 1, 47), 20, 20, 256, 256,
                          kNoNorm, kGptj, 64, 192, 1e6),
                     latent(512, true))}});
  // kimi_linear: full_attn_layers 4, 8, ..., 24, 27 are 1-based; no rope.
  e.push_back({"kimi_linear.json", 27,
               {kind("full_attention", {3, 7, 11, 15, 19, 23, 26}, 32, 32, 192,
                     128, kNoNorm, kNoRope, 0, 0, 1e4)}});
  // longcat: 2 * 28 sublayers; q scaled by sqrt(6144 / 1536) = 2, the
  // normalised latent by sqrt(6144 / 512) = sqrt(12).
  e.push_back({"longcat_flash.json", 56,
               {with(kind("full_attention", every(0, 1, 56), 64, 64, 192, 128,
                          kNoNorm, kGptj, 64, 128, 1e7, 0,
                          2 * inverseSqrt(192)),
                     [&](KindExpect &k) {
                       latent(512, true)(k);
                       k.latent_scale = std::sqrt(12.0);
                     })}});
  // bailing: every 8th layer (7, 15, ...) MLA, one gate value per head.
  e.push_back({"bailing_hybrid.json", 32,
               {with(kind("full_attention", every(7, 8, 32), 32, 32, 192, 128,
                          kNoNorm, kGptj, 64, 128, 6e5),
                     [](KindExpect &k) { k.gate = GateLayout::HeadScalar; })}});
  e.push_back({"minicpm3.json", 62,
               {with(kind("full_attention", every(0, 1, 62), 40, 40, 96, 64,
                          kNoNorm, kNeox, 32, 64, 1e4),
                     [](KindExpect &k) { k.scaling = RopeScalingKind::LongRope; })}});
  e.push_back({"ernie4_5.json", 18,
               {full(every(0, 1, 18), 16, 2, 128, kNoNorm, kGptj, 128, 5e5)}});
  e.push_back({"ernie4_5_moe.json", 28,
               {full(every(0, 1, 28), 20, 4, 128, kNoNorm, kGptj, 128, 5e5)}});
  e.push_back({"helium.json", 28,
               {full(every(0, 1, 28), 16, 8, 128, kNoNorm, kGptj, 128, 1e5)}});
  // gpt-oss: even layers slide, sinks everywhere, yarn.
  e.push_back(
      {"gpt-oss-20b.json", 24,
       {with(full(every(1, 2, 24), 64, 8, 64, kNoNorm, kNeox, 64, 150000),
             [](KindExpect &k) {
               k.sinks = true;
               k.scaling = RopeScalingKind::Yarn;
             }),
        with(kind("sliding_attention", every(0, 2, 24), 64, 8, 64, 64, kNoNorm,
                  kNeox, 64, 0, 150000, 128),
             [](KindExpect &k) {
               k.sinks = true;
               k.scaling = RopeScalingKind::Yarn;
             })}});
  // olmo: RMSNorm over the whole projection.
  const auto projection = [](KindExpect k) {
    k.scope = NormScope::Projection;
    return k;
  };
  e.push_back({"olmo2.json", 32,
               {projection(full(every(0, 1, 32), 32, 32, 128, kRms, kNeox, 128, 5e5))}});
  e.push_back({"olmoe.json", 16,
               {projection(full(every(0, 1, 16), 16, 16, 128, kRms, kNeox, 128, 1e4))}});
  e.push_back(
      {"olmo3.json", 32,
       {projection(full(every(3, 4, 32), 32, 32, 128, kRms, kNeox, 128, 5e5)),
        projection(kind("sliding_attention", allBut(32, every(3, 4, 32)), 32,
                        32, 128, 128, kRms, kNeox, 128, 0, 5e5, 4096))}});
  e.push_back(
      {"minimax_m2.json", 62,
       {projection(full(every(0, 1, 62), 48, 8, 128, kRms, kNeox, 64, 5e6))}});
  // cohere (use_qk_norm): mean-subtracted LayerNorm, weight per head, gptj.
  e.push_back({"cohere.json", 64,
               {with(full(every(0, 1, 64), 96, 8, 128, kLayerNorm, kGptj, 128,
                          7.5e7),
                     [](KindExpect &k) { k.scope = NormScope::HeadWeights; })}});
  // cohere2: every 4th layer full and NoPE, the others slide with rope.
  e.push_back({"cohere2.json", 32,
               {kind("full_attention_nope", every(3, 4, 32), 32, 8, 128, 128,
                     kNoNorm, kNoRope, 0, 0, 1e4),
                kind("sliding_attention", allBut(32, every(3, 4, 32)), 32, 8,
                     128, 128, kNoNorm, kGptj, 128, 0, 5e4, 4096)}});
  // exaone4 "LLLG": G (full, NoPE since sliding_window is set) at 3, 7, ...
  e.push_back(
      {"exaone4.json", 64,
       {kind("full_attention_nope", every(3, 4, 64), 40, 8, 128, 128, kRms,
             kNoRope, 0, 0, 1e4),
        with(kind("sliding_attention", allBut(64, every(3, 4, 64)), 40, 8, 128,
                  128, kRms, kNeox, 128, 0, 1e6, 4096),
             [](KindExpect &k) { k.scaling = RopeScalingKind::Llama3; })}});
  // afmoe: every 4th layer global (NoPE), gate_proj gate.
  e.push_back(
      {"afmoe.json", 32,
       {with(kind("full_attention_nope", every(3, 4, 32), 32, 4, 128, 128, kRms,
                  kNoRope, 0, 0, 1e4),
             [](KindExpect &k) { k.gate = GateLayout::Concatenated; }),
        with(kind("sliding_attention", allBut(32, every(3, 4, 32)), 32, 4, 128,
                  128, kRms, kNeox, 128, 0, 1e4, 2048),
             [](KindExpect &k) { k.gate = GateLayout::Concatenated; })}});
  // granite: attention_multiplier is the scale.
  e.push_back({"granite.json", 40,
               {with(full(every(0, 1, 40), 32, 8, 128, kNoNorm, kNeox, 128, 1e7),
                     [](KindExpect &k) { k.scale = 0.0078125; })}});
  e.push_back({"granitemoe.json", 32,
               {with(full(every(0, 1, 32), 24, 8, 64, kNoNorm, kNeox, 64, 1e7),
                     [](KindExpect &k) { k.scale = 0.015625; })}});
  e.push_back({"granitemoehybrid.json", 40,
               {with(full({5, 15, 25, 35}, 32, 8, 128, kNoNorm, kNoRope, 0, 1e4),
                     [](KindExpect &k) { k.scale = 0.0078125; })}});
  // falcon-7b: multi_query -> one KV head; 4544 / 71 = 64.
  e.push_back({"falcon.json", 32,
               {full(every(0, 1, 32), 71, 1, 64, kNoNorm, kNeox, 64, 1e4)}});
  // minimax: attn_type_list 1 at every 8th layer; rotary_dim not read.
  e.push_back({"minimax.json", 80,
               {full(every(7, 8, 80), 64, 8, 128, kNoNorm, kNeox, 128, 1e7)}});
  // hunyuan: norm after rope; dynamic + alpha 1000 is base
  // 1e4 * 1000^(128/126).
  for (std::string file : {"hunyuan_v1_dense.json", "hunyuan_v1_moe.json"})
    e.push_back(
        {file, 32,
         {with(full(every(0, 1, 32), 32, 8, 128, kRms, kNeox, 128,
                    1e4 * std::pow(1000.0, 128.0 / 126.0)),
               [](KindExpect &k) { k.norm_before_rope = false; })}});
  e.push_back({"hy_v3.json", 32,
               {full(every(0, 1, 32), 32, 8, 128, kRms, kNeox, 128, 11158840)}});
  e.push_back({"apertus.json", 32,
               {with(full(every(0, 1, 32), 32, 8, 128, kRms, kNeox, 128, 1.2e7),
                     [](KindExpect &k) { k.scaling = RopeScalingKind::Llama3; })}});
  // smollm3: no_rope_layers 0 at every 4th layer.
  e.push_back({"smollm3.json", 36,
               {full(allBut(36, every(3, 4, 36)), 16, 4, 128, kNoNorm, kNeox,
                     128, 5e6),
                kind("full_attention_nope", every(3, 4, 36), 16, 4, 128, 128,
                     kNoNorm, kNoRope, 0, 0, 1e4)}});
  // Llama 4 Scout: 48 layers, every 4th (3, 7, ..., 47) NoPE and full
  // (no_rope_layer_interval 4), the others chunked (attention_chunk_size
  // 8192) with interleaved rope over all 128 dims, theta 5e5, llama3 scaling
  // with low == high freq factor (a step), and the weightless L2 norm
  // (use_qk_norm) after rope on the rope layers only.
  e.push_back(
      {"llama-4-scout-17b-16e-instruct.json", 48,
       {with(kind("full_attention_nope", every(3, 4, 48), 40, 8, 128, 128,
                  kNoNorm, kNoRope, 0, 0, 1e4),
             [](KindExpect &k) { k.temperature_floor_scale = 8192.0; }),
        with(kind("chunked_attention", allBut(48, every(3, 4, 48)), 40, 8, 128,
                  128, NormStyle::Unweighted, kGptj, 128, 0, 5e5),
             [](KindExpect &k) {
               k.norm_before_rope = false;
               k.scaling = RopeScalingKind::Llama3;
               k.attention_chunk = 8192;
             })}});
  // mimo: hybrid_layer_pattern; sliding layers swa_* heads, sinks there only.
  {
    std::vector<int64_t> full_layers = {0, 5, 11, 17, 23, 29, 35, 41, 47};
    e.push_back(
        {"mimo-v2-flash.json", 48,
         {with(kind("full_attention", full_layers, 64, 4, 192, 128, kNoNorm,
                    kNeox, 64, 0, 5e6),
               [](KindExpect &k) { k.value_scale = 0.707; }),
          with(kind("sliding_attention", allBut(48, full_layers), 64, 8, 192,
                    128, kNoNorm, kNeox, 64, 0, 1e4, 129),
               [](KindExpect &k) {
                 k.sinks = true;
                 k.value_scale = 0.707;
               })}});
  }
  e.push_back({"laguna-xs.2.json", 0, {}, "softplus output gate"});
  e.push_back({"lfm2.json", 16,
               {full({2, 5, 8, 10, 12, 14}, 32, 8, 64, kRms, kNeox, 64, 1e6)}});
  // gpt_neox: rotary_pct 0.25 of 128 = 32.
  e.push_back({"gpt_neox.json", 24,
               {full(every(0, 1, 24), 16, 16, 128, kNoNorm, kNeox, 32, 1e4)}});
  // stablelm-2-12b: 5120 / 32 = 160, partial 0.25 -> 40, LayerNorm per head.
  e.push_back({"stablelm.json", 40,
               {with(full(every(0, 1, 40), 32, 8, 160, kLayerNorm, kNeox, 40, 1e4),
                     [](KindExpect &k) { k.scope = NormScope::HeadWeights; })}});
  // persimmon: 4096 / 64 = 64, partial 0.5, shared LayerNorm with bias.
  e.push_back({"persimmon.json", 36,
               {with(full(every(0, 1, 36), 64, 64, 64, kLayerNorm, kNeox, 32,
                          25000),
                     [](KindExpect &k) { k.norm_bias = true; })}});
  // phi-2: 2560 / 32 = 80, partial 0.4 -> 32, qk_layernorm off.
  e.push_back({"phi.json", 32,
               {full(every(0, 1, 32), 32, 32, 80, kNoNorm, kNeox, 32, 1e4)}});
  e.push_back({"nemotron.json", 32,
               {full(every(0, 1, 32), 24, 8, 128, kNoNorm, kNeox, 64, 1e4)}});
  // cwm: i % 4 == 0 full, the others slide (8192).
  e.push_back(
      {"cwm.json", 64,
       {with(full(every(0, 4, 64), 48, 8, 128, kNoNorm, kNeox, 128, 1e6),
             [](KindExpect &k) { k.scaling = RopeScalingKind::Llama3; }),
        with(kind("sliding_attention", allBut(64, every(0, 4, 64)), 48, 8, 128,
                  128, kNoNorm, kNeox, 128, 0, 1e6, 8192),
             [](KindExpect &k) { k.scaling = RopeScalingKind::Llama3; })}});
  e.push_back(
      {"kimi-k2-instruct.json", 61,
       {with(kind("full_attention", every(0, 1, 61), 64, 64, 192, 128, kNoNorm,
                  kGptj, 64, 128, 5e4, 0,
                  inverseSqrt(192) * mscaleSquared(32, 1.0)),
             [&](KindExpect &k) {
               k.scaling = RopeScalingKind::Yarn;
               latent(512, true)(k);
             })}});
  return e;
}

void checkKind(const std::string &file, const LayerKind &got,
               const KindExpect &want) {
  SCOPED_TRACE(file + ": " + want.name);
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.layers, want.layers);
  EXPECT_EQ(got.heads.num_q_heads, want.hq);
  EXPECT_EQ(got.heads.num_kv_heads, want.hkv);
  EXPECT_EQ(got.heads.qk_head_dim, want.dqk);
  EXPECT_EQ(got.heads.v_head_dim, want.dv);
  EXPECT_EQ(got.heads.gate, want.gate);
  EXPECT_EQ(got.qk_norm, want.norm);
  EXPECT_EQ(got.qk_norm_scope, want.scope);
  EXPECT_EQ(got.qk_norm_bias, want.norm_bias);
  EXPECT_EQ(got.norm_before_rope, want.norm_before_rope);
  EXPECT_EQ(got.rope.style, want.rope);
  EXPECT_EQ(got.rope.rotary_dim, want.rotary_dim);
  EXPECT_EQ(got.rope.rotary_offset, want.rotary_offset);
  if (want.rope != RopeStyle::None) {
    EXPECT_NEAR(got.rope.theta, want.theta, want.theta * 1e-12);
    EXPECT_EQ(got.rope.scaling.kind, want.scaling);
  }
  EXPECT_EQ(got.sliding_window, want.window);
  EXPECT_EQ(got.sinks, want.sinks);
  EXPECT_NEAR(got.softmax_scale, want.scale, want.scale * 1e-12);
  EXPECT_EQ(got.logit_softcap, want.softcap);
  EXPECT_EQ(got.value_scale, want.value_scale);
  EXPECT_EQ(got.query_temperature.floor_scale, want.temperature_floor_scale);
  EXPECT_EQ(got.attention_chunk, want.attention_chunk);
  EXPECT_EQ(got.mla.has_value(), want.kv_lora_rank != 0);
  if (got.mla && want.kv_lora_rank != 0) {
    EXPECT_EQ(got.mla->kv_lora_rank, want.kv_lora_rank);
    EXPECT_NEAR(got.mla->latent_scale, want.latent_scale,
                want.latent_scale * 1e-12);
    EXPECT_EQ(got.mla->rope_deinterleave, want.rope_deinterleave);
    // transformers builds kv_a_layernorm without an eps: 1e-6 always.
    EXPECT_EQ(got.mla->kv_norm_eps, 1e-6);
    EXPECT_EQ(got.mla->block_size, 64);
  }
}

TEST(FamilyConfigs, EachFamilyImportsItsConventions) {
  for (const FamilyExpect &family : expectations()) {
    SCOPED_TRACE(family.file);
    Result<ModelConfig> c = importModelConfigFile(configPath(family.file));
    if (!family.refused.empty()) {
      ASSERT_FALSE(c.ok()) << family.file << " imported; expected a refusal";
      EXPECT_NE(c.error().rule.find(family.refused), std::string::npos)
          << c.error().message();
      EXPECT_NE(c.error().rule.find("is not supported"), std::string::npos)
          << c.error().message();
      continue;
    }
    ASSERT_TRUE(c.ok()) << c.error().message();
    EXPECT_EQ(c->num_layers, family.num_layers);
    ASSERT_EQ(c->kinds.size(), family.kinds.size());
    for (std::size_t i = 0; i < family.kinds.size(); ++i)
      checkKind(family.file, c->kinds[i], family.kinds[i]);
  }
}

/// The config's family model type (inner text_config type, else the outer).
std::string familyType(const json &config) {
  if (config.contains("text_config") &&
      config["text_config"].contains("model_type"))
    return config["text_config"]["model_type"].get<std::string>();
  return config["model_type"].get<std::string>();
}

json readJson(const std::filesystem::path &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

TEST(FamilyConfigs, EveryConfigImportsOrNamesTheUnsupportedFeature) {
  std::set<std::string> types_seen;
  std::set<std::string> expected_files;
  for (const FamilyExpect &family : expectations())
    expected_files.insert(family.file);
  int configs = 0, imported = 0, refused = 0;
  for (const auto &entry :
       std::filesystem::directory_iterator(ATTNC_HF_CONFIGS_DIR)) {
    if (entry.path().extension() != ".json")
      continue;
    ++configs;
    const std::string file = entry.path().filename().string();
    SCOPED_TRACE(file);
    EXPECT_TRUE(expected_files.count(file)) << "no expectation for " << file;
    types_seen.insert(familyType(readJson(entry.path())));
    Result<ModelConfig> c = importModelConfigFile(entry.path().string());
    if (c.ok()) {
      ++imported;
      continue;
    }
    ++refused;
    // A refusal names a feature; never "ambiguous" for a known family.
    EXPECT_NE(c.error().rule.find("is not supported"), std::string::npos)
        << c.error().message();
    EXPECT_EQ(c.error().rule.find("ambiguous"), std::string::npos)
        << c.error().message();
  }
  EXPECT_EQ(configs, static_cast<int>(expected_files.size()));
  // Every reference family has a config here (kimi_k2 and the gemma3 /
  // llama4 wrappers count by their text type).
  for (const std::string &type : kReferenceTypes)
    EXPECT_TRUE(types_seen.count(type) ||
                (type == "qwen3_5" && types_seen.count("qwen3_5_text")) ||
                (type == "qwen3_5_moe" && types_seen.count("qwen3_5_moe_text")))
        << "no config for " << type;
  EXPECT_GE(imported, 60);
  EXPECT_LE(refused, 6);
}

TEST(FamilyConfigs, SpecRoundTripsEveryFamily) {
  for (const auto &entry :
       std::filesystem::directory_iterator(ATTNC_HF_CONFIGS_DIR)) {
    if (entry.path().extension() != ".json")
      continue;
    SCOPED_TRACE(entry.path().filename().string());
    Result<ModelConfig> c = importModelConfigFile(entry.path().string());
    if (!c.ok())
      continue;
    std::string spec = toSpecJson(*c);
    Result<ModelConfig> again = importModelConfig(spec);
    ASSERT_TRUE(again.ok()) << again.error().message() << "\n" << spec;
    EXPECT_EQ(toSpecJson(*again), spec);
  }
}

//===----------------------------------------------------------------------===//
// Rules a config's keys switch
//===----------------------------------------------------------------------===//

Result<ModelConfig> importJson(const json &config) {
  return importModelConfig(config.dump());
}

json fileJson(const std::string &file) { return readJson(configPath(file)); }

TEST(FamilyRules, FalconAlibiIsRefusedNamingIt) {
  json falcon = fileJson("falcon.json");
  falcon["alibi"] = true;
  Result<ModelConfig> c = importJson(falcon);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message(),
            "model_type: falcon with alibi: ALiBi position bias is not "
            "supported");
}

TEST(FamilyRules, FalconNewDecoderArchitectureReadsNumKvHeads) {
  json falcon = fileJson("falcon.json");
  falcon["new_decoder_architecture"] = true;
  falcon["num_kv_heads"] = 71;
  Result<ModelConfig> c = importJson(falcon);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->kinds[0].heads.num_kv_heads, 71);
  // head_dim is hidden_size / heads whatever a head_dim key says.
  falcon["head_dim"] = 32;
  c = importJson(falcon);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->kinds[0].heads.qk_head_dim, 64);
}

// CwmConfig sets llama3 scaling (factor 16, low 1, high 4, original 8192,
// theta 1e6) when config.json has no rope key at all; a config that states
// its rope keeps what it states.
TEST(FamilyRules, CwmWithoutRopeKeysTakesItsClassDefaultScaling) {
  json cwm = fileJson("cwm.json");
  for (const char *key : {"rope_parameters", "rope_scaling", "rope_theta"})
    cwm.erase(key);
  Result<ModelConfig> c = importJson(cwm);
  ASSERT_TRUE(c.ok()) << c.error().message();
  for (const LayerKind &kind : c->kinds) {
    const RopeScaling &s = kind.rope.scaling;
    EXPECT_EQ(s.kind, RopeScalingKind::Llama3) << kind.name;
    EXPECT_EQ(s.factor, 16.0);
    EXPECT_EQ(s.low_freq_factor, 1.0);
    EXPECT_EQ(s.high_freq_factor, 4.0);
    EXPECT_EQ(s.original_max_position, 8192);
    EXPECT_EQ(kind.rope.theta, 1e6);
  }
  cwm["rope_theta"] = 5e5;
  c = importJson(cwm);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->kinds[0].rope.scaling.kind, RopeScalingKind::None);
  EXPECT_EQ(c->kinds[0].rope.theta, 5e5);
}

TEST(FamilyRules, Llama4ChunkedRopeLayersAndNopeLayersWithTemperature) {
  // With attention_chunk_size 8192 the rope layers attend within chunks;
  // every 4th layer (3, 7, ...) is full, NoPE, with the attention
  // temperature and no norm; the rope layers gptj with the weightless norm
  // after rope.
  json scout = fileJson("llama-4-scout-17b-16e-instruct.json");
  // Scout's llama3 scaling has low_freq_factor == high_freq_factor (a hard
  // step), which the importer and the dialect refuse (division by zero in
  // the smooth band); this test is about the layers, not the scaling.
  scout["text_config"]["rope_scaling"]["high_freq_factor"] = 4.0;
  Result<ModelConfig> c = importJson(scout);
  ASSERT_TRUE(c.ok()) << c.error().message();
  ASSERT_EQ(c->kinds.size(), 2u);
  // Order: full (here only NoPE layers) before chunked.
  const LayerKind &nope = c->kinds[0], &rope = c->kinds[1];
  EXPECT_EQ(rope.name, "chunked_attention");
  EXPECT_EQ(rope.attention_chunk, 8192);
  EXPECT_EQ(nope.attention_chunk, 0);
  EXPECT_EQ(rope.layers, allBut(48, every(3, 4, 48)));
  EXPECT_EQ(rope.qk_norm, NormStyle::Unweighted);
  EXPECT_FALSE(rope.norm_before_rope);
  EXPECT_EQ(rope.rope.style, RopeStyle::Gptj);
  EXPECT_EQ(rope.query_temperature.floor_scale, 0.0);
  EXPECT_EQ(nope.name, "full_attention_nope");
  EXPECT_EQ(nope.layers, every(3, 4, 48));
  EXPECT_EQ(nope.qk_norm, NormStyle::None);
  EXPECT_EQ(nope.rope.style, RopeStyle::None);
  EXPECT_EQ(nope.query_temperature.floor_scale, 8192.0);
  EXPECT_EQ(nope.query_temperature.scale, 0.1);
  // attn_temperature_tuning false removes it; use_qk_norm false the norm.
  scout["text_config"]["attn_temperature_tuning"] = false;
  scout["text_config"]["use_qk_norm"] = false;
  c = importJson(scout);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->kinds[0].query_temperature.floor_scale, 0.0);
  EXPECT_EQ(c->kinds[1].qk_norm, NormStyle::None);
  EXPECT_TRUE(c->kinds[1].norm_before_rope);
  // Without attention_chunk_size the rope layers are plain full attention.
  scout["text_config"].erase("attention_chunk_size");
  c = importJson(scout);
  ASSERT_TRUE(c.ok()) << c.error().message();
  ASSERT_EQ(c->kinds.size(), 2u);
  EXPECT_EQ(c->kinds[0].name, "full_attention");
  EXPECT_EQ(c->kinds[0].layers, allBut(48, every(3, 4, 48)));
  EXPECT_EQ(c->kinds[1].name, "full_attention_nope");
  // A layer_types list saying chunked_attention needs the chunk size.
  scout["text_config"]["layer_types"] = json::array();
  for (int i = 0; i < 48; ++i)
    scout["text_config"]["layer_types"].push_back(
        i % 4 == 3 ? "full_attention" : "chunked_attention");
  c = importJson(scout);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().field, "text_config.attention_chunk_size");
  scout["text_config"]["attention_chunk_size"] = 4096;
  c = importJson(scout);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->kinds[1].name, "chunked_attention");
  EXPECT_EQ(c->kinds[1].attention_chunk, 4096);
}

TEST(FamilyRules, Exaone4WithoutWindowIsAllFullWithRope) {
  json exaone = fileJson("exaone4.json");
  exaone.erase("sliding_window");
  Result<ModelConfig> c = importJson(exaone);
  ASSERT_TRUE(c.ok()) << c.error().message();
  ASSERT_EQ(c->kinds.size(), 1u);
  EXPECT_EQ(c->kinds[0].name, "full_attention");
  EXPECT_EQ(c->kinds[0].layers, every(0, 1, 64));
  EXPECT_EQ(c->kinds[0].rope.style, RopeStyle::Neox);
  exaone = fileJson("exaone4.json");
  exaone["sliding_window_pattern"] = "LLXG";
  c = importJson(exaone);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().field, "sliding_window_pattern");
}

TEST(FamilyRules, SmolLM3SlidesItsNopeLayersWithUseSlidingWindow) {
  json smol = fileJson("smollm3.json");
  smol["use_sliding_window"] = true;
  smol["sliding_window"] = 4096;
  smol.erase("no_rope_layers");
  smol["no_rope_layer_interval"] = 3;
  Result<ModelConfig> c = importJson(smol);
  ASSERT_TRUE(c.ok()) << c.error().message();
  ASSERT_EQ(c->kinds.size(), 2u);
  EXPECT_EQ(c->kinds[0].name, "full_attention");
  EXPECT_EQ(c->kinds[0].layers, allBut(36, every(2, 3, 36)));
  EXPECT_EQ(c->kinds[1].name, "sliding_attention_nope");
  EXPECT_EQ(c->kinds[1].layers, every(2, 3, 36));
  EXPECT_EQ(c->kinds[1].sliding_window, 4096);
}

TEST(FamilyRules, KeySwitchedNorms) {
  json glm = fileJson("glm4_moe.json");
  glm["use_qk_norm"] = false;
  Result<ModelConfig> c = importJson(glm);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->kinds[0].qk_norm, NormStyle::None);
  json phi = fileJson("phi.json");
  phi["qk_layernorm"] = true;
  c = importJson(phi);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->kinds[0].qk_norm, NormStyle::LayerNorm);
  EXPECT_EQ(c->kinds[0].qk_norm_scope, NormScope::Head);
  EXPECT_TRUE(c->kinds[0].qk_norm_bias);
  EXPECT_EQ(c->kinds[0].norm_eps, 1e-5); // layer_norm_eps
}

TEST(FamilyRules, DeepSeekRopeInterleaveFalseIsNeox) {
  json ds = readJson(configPath("deepseek-v3.json"));
  ds["rope_interleave"] = false;
  Result<ModelConfig> c = importJson(ds);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->kinds[0].rope.style, RopeStyle::Neox);
  // rotate_half on the rope part: nothing to de-interleave.
  ASSERT_TRUE(c->kinds[0].mla.has_value());
  EXPECT_FALSE(c->kinds[0].mla->rope_deinterleave);
}

TEST(FamilyRules, MlaNeedsKvLoraRank) {
  json ds = readJson(configPath("deepseek-v3.json"));
  ds.erase("kv_lora_rank");
  Result<ModelConfig> c = importJson(ds);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().field, "kv_lora_rank");
  EXPECT_NE(c.error().rule.find("required field is missing"),
            std::string::npos)
      << c.error().message();
}

TEST(FamilyRules, MlaLatentFormOnlyForItsFamilies) {
  // The same DeepSeek-V3 numbers under a family without the latent rule
  // (MiniCPM3) import decompressed.
  json ds = readJson(configPath("deepseek-v3.json"));
  ds["model_type"] = "minicpm3";
  ds.erase("rope_scaling");
  Result<ModelConfig> c = importJson(ds);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_FALSE(c->kinds[0].mla.has_value());
  EXPECT_EQ(c->kinds[0].heads.num_kv_heads, 128);
}

TEST(FamilyTable, MlaRowKeys) {
  expectTableError(
      tableWith(R"({"model_types": ["b"], "mla": {"latent_scale": true}})"),
      "families[1].mla.latent_scale", "unknown");
  Result<std::vector<FamilyRules>> table = parseFamilyTable(tableWith(
      R"({"model_types": ["b"], "mla": {"rope_deinterleave": true}})"));
  ASSERT_TRUE(table.ok()) << table.error().message();
  EXPECT_FALSE((*table)[0].mla.present);
  EXPECT_TRUE((*table)[1].mla.present);
  EXPECT_TRUE((*table)[1].mla.rope_deinterleave);
  EXPECT_FALSE((*table)[1].mla.kv_lora_scale);
}

TEST(FamilyRules, GranitePositionEmbeddingRope) {
  json granite = fileJson("granitemoehybrid.json");
  granite["position_embedding_type"] = "rope";
  granite["rope_theta"] = 10000000;
  Result<ModelConfig> c = importJson(granite);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->kinds[0].rope.style, RopeStyle::Neox);
  EXPECT_EQ(c->kinds[0].rope.rotary_dim, 128);
  EXPECT_EQ(c->kinds[0].rope.theta, 1e7);
}

TEST(FamilyRules, LongRopeFactorsAndAttentionFactor) {
  Result<ModelConfig> phi3 = importModelConfigFile(configPath("phi3.json"));
  ASSERT_TRUE(phi3.ok()) << phi3.error().message();
  const RopeScaling &s = phi3->kinds[0].rope.scaling;
  EXPECT_EQ(s.short_factor.size(), 48u); // rotary_dim 96 / 2
  EXPECT_EQ(s.long_factor.size(), 48u);
  EXPECT_EQ(s.original_max_position, 4096); // the top-level key
  EXPECT_EQ(s.factor, 131072.0 / 4096.0);   // max / original, no factor key
  EXPECT_EQ(s.attention_factor, 0.0);       // the kind's default
  Result<ModelConfig> moe = importModelConfigFile(configPath("phimoe.json"));
  ASSERT_TRUE(moe.ok()) << moe.error().message();
  EXPECT_EQ(moe->kinds[0].rope.scaling.attention_factor, 1.243163121016122);

  json bad = fileJson("phi3.json");
  bad["rope_scaling"]["short_factor"].erase(0);
  Result<ModelConfig> c = importJson(bad);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().field, "rope_scaling.short_factor");
  EXPECT_NE(c.error().rule.find("rotary_dim / 2 = 48"), std::string::npos);
  bad = fileJson("phimoe.json");
  bad["rope_scaling"]["long_mscale"] = 1.5;
  c = importJson(bad);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().field, "rope_scaling.long_mscale");
}

TEST(FamilyRules, YarnAttentionFactorIsRead) {
  json arcee = fileJson("arcee.json");
  arcee["rope_scaling"]["attention_factor"] = 1.25;
  Result<ModelConfig> c = importJson(arcee);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->kinds[0].rope.scaling.attention_factor, 1.25);
}

//===----------------------------------------------------------------------===//
// Tensor parallelism and the spec's new fields
//===----------------------------------------------------------------------===//

TEST(TensorParallel, ProjectionNormRefusesSplitting) {
  Result<ModelConfig> olmo = importModelConfigFile(configPath("olmo2.json"));
  ASSERT_TRUE(olmo.ok()) << olmo.error().message();
  EXPECT_TRUE(checkTensorParallel(*olmo, 1).ok());
  Status split = checkTensorParallel(*olmo, 2);
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.field, "tp");
  EXPECT_NE(split.rule.find("qk_norm_scope \"projection\""), std::string::npos);
  Result<ModelConfig> qwen = importModelConfigFile(configPath("qwen3-8b.json"));
  ASSERT_TRUE(qwen.ok()) << qwen.error().message();
  EXPECT_TRUE(checkTensorParallel(*qwen, 8).ok());
}

TEST(TensorParallel, MlaShardsHeadsNeverTheLatent) {
  Result<ModelConfig> ds = importModelConfigFile(configPath("deepseek-v3.json"));
  ASSERT_TRUE(ds.ok()) << ds.error().message();
  EXPECT_TRUE(checkTensorParallel(*ds, 8).ok());
  const LayerKind &kind = ds->kinds[0];
  // 128 heads over 8 ranks: 16 each, rank 3 from head 48; the decompressed
  // prefill's k/v heads split alike (one per query head).
  Result<RankShard> shard =
      computeRankShard(kind.heads, 8, 3, CheckpointForm::Separate);
  ASSERT_TRUE(shard.ok()) << shard.error().message();
  EXPECT_EQ(shard->local.shape.num_q_heads, 16);
  EXPECT_EQ(shard->local.shape.num_kv_heads, 16);
  EXPECT_EQ(shard->first_q_head, 48);
  // The latent is whatever tp: 512 + 64 values per token.
  Result<LatentCacheLayout> latent = computeLatentCacheLayout(
      kind.mla->kv_lora_rank, kind.rope.rotary_dim, kind.mla->block_size);
  ASSERT_TRUE(latent.ok()) << latent.error().message();
  EXPECT_EQ(latent->row_width, 576);
  EXPECT_EQ(latent->bytesPerToken(2), 1152);
  // 128 heads do not split over 256 ranks.
  EXPECT_FALSE(computeRankShard(kind.heads, 256, 0, CheckpointForm::Separate)
                   .ok());
}

/// A one-kind spec with `extra` merged into the kind.
std::string specWith(const json &extra) {
  json kind = {{"name", "full_attention"}, {"layers", {0}},
               {"num_q_heads", 4},        {"qk_head_dim", 64},
               {"qk_norm", "rms"},        {"rope", {{"style", "neox"}}}};
  for (auto &[key, value] : extra.items()) {
    if (key == "rope")
      for (auto &[k, v] : value.items())
        kind["rope"][k] = v;
    else
      kind[key] = value;
  }
  return json{{"attnc_spec", 1}, {"num_layers", 1}, {"layer_kinds", {kind}}}
      .dump();
}

void expectSpecError(const json &extra, const std::string &field,
                     const std::string &rule_part) {
  Result<ModelConfig> c = importModelConfig(specWith(extra));
  ASSERT_FALSE(c.ok()) << extra.dump();
  EXPECT_EQ(c.error().field, field) << c.error().message();
  EXPECT_NE(c.error().rule.find(rule_part), std::string::npos)
      << c.error().message();
}

TEST(SpecFields, NewFieldsAreValidated) {
  expectSpecError({{"qk_norm_bias", true}}, "layer_kinds[0].qk_norm_bias",
                  "needs qk_norm \"layernorm\"");
  expectSpecError({{"qk_norm_scope", "token"}}, "layer_kinds[0].qk_norm_scope",
                  "must be \"head\", \"head_weights\" or \"projection\"");
  expectSpecError({{"qk_norm", "none"}, {"qk_norm_scope", "projection"}},
                  "layer_kinds[0].qk_norm_scope", "must be \"head\" when");
  expectSpecError({{"qk_norm", "none"}, {"norm_before_rope", false}},
                  "layer_kinds[0].norm_before_rope", "needs both");
  expectSpecError({{"gate", "per_head"}}, "layer_kinds[0].gate",
                  "\"head_scalar\"");
  expectSpecError(
      {{"rope",
        {{"scaling", {{"kind", "longrope"}, {"original_max_position", 4096}}}}}},
      "layer_kinds[0].rope.scaling.short_factor",
      "longrope needs rotary_dim / 2 = 32 values (got 0)");
  expectSpecError({{"rope",
                    {{"scaling",
                      {{"kind", "longrope"},
                       {"original_max_position", 4096},
                       {"short_factor", std::vector<double>(32, 1.0)},
                       {"long_factor", std::vector<double>(31, 1.0)}}}}}},
                  "layer_kinds[0].rope.scaling.long_factor",
                  "rotary_dim / 2 = 32");
  expectSpecError({{"rope",
                    {{"scaling",
                      {{"kind", "yarn"},
                       {"original_max_position", 4096},
                       {"short_factor", std::vector<double>(32, 1.0)}}}}}},
                  "layer_kinds[0].rope.scaling.short_factor",
                  "only allowed with kind \"longrope\"");
  std::vector<double> negative(32, 1.0);
  negative[5] = -1;
  expectSpecError({{"rope",
                    {{"scaling",
                      {{"kind", "longrope"},
                       {"original_max_position", 4096},
                       {"short_factor", negative},
                       {"long_factor", std::vector<double>(32, 1.0)}}}}}},
                  "layer_kinds[0].rope.scaling.short_factor[5]", "must be > 0");
  expectSpecError({{"query_temperature", {{"floor_scale", 0}}}},
                  "layer_kinds[0].query_temperature.floor_scale", "must be > 0");
}

TEST(SpecFields, NewFieldsRoundTripAndOldSpecsStayTheSame) {
  Result<ModelConfig> c = importModelConfig(specWith(
      {{"qk_norm", "layernorm"},
       {"qk_norm_scope", "head_weights"},
       {"qk_norm_bias", true},
       {"norm_before_rope", false},
       {"gate", "head_scalar"},
       {"query_temperature", {{"floor_scale", 8192}, {"scale", 0.1}}},
       {"rope",
        {{"scaling",
          {{"kind", "longrope"},
           {"original_max_position", 4096},
           {"factor", 32},
           {"attention_factor", 1.2},
           {"short_factor", std::vector<double>(32, 1.5)},
           {"long_factor", std::vector<double>(32, 2.5)}}}}}}));
  ASSERT_TRUE(c.ok()) << c.error().message();
  const LayerKind &k = c->kinds[0];
  EXPECT_EQ(k.qk_norm, NormStyle::LayerNorm);
  EXPECT_EQ(k.qk_norm_scope, NormScope::HeadWeights);
  EXPECT_TRUE(k.qk_norm_bias);
  EXPECT_FALSE(k.norm_before_rope);
  EXPECT_EQ(k.heads.gate, GateLayout::HeadScalar);
  EXPECT_EQ(k.query_temperature.floor_scale, 8192);
  EXPECT_EQ(k.rope.scaling.kind, RopeScalingKind::LongRope);
  EXPECT_EQ(k.rope.scaling.long_factor, std::vector<double>(32, 2.5));
  EXPECT_EQ(k.rope.scaling.attention_factor, 1.2);
  std::string spec = toSpecJson(*c);
  Result<ModelConfig> again = importModelConfig(spec);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(toSpecJson(*again), spec);

  // A kind with none of them writes none of their keys.
  Result<ModelConfig> plain = importModelConfig(specWith(json::object()));
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  std::string text = toSpecJson(*plain);
  for (const char *key : {"qk_norm_scope", "qk_norm_bias", "short_factor",
                          "long_factor", "attention_factor",
                          "query_temperature"})
    EXPECT_EQ(text.find(key), std::string::npos) << key;
}

} // namespace
} // namespace attnc
