//===- LayerBuilderTest.cpp - ModelConfig q/k norm variants to attn IR ----===//
//
// The q/k norm of a layer kind (style, scope, bias, before or after rope)
// becomes attn.rms_norm ops and function arguments of the shapes the scope
// gives; a projection-scope norm cannot be split across tensor-parallel
// ranks.
//
//===----------------------------------------------------------------------===//
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Dialect/Attn/LayerBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

using namespace attnc;

namespace {

/// One kind: 32 q heads, 8 KV heads, 128/128, neox rope over the head.
ModelConfig config(NormStyle style, NormScope scope, bool bias,
                   bool beforeRope = true) {
  LayerKind kind;
  kind.name = "full_attention";
  kind.layers = {0};
  kind.heads = HeadShape{32, 8, 128, 128, GateLayout::None};
  kind.qk_norm = style;
  kind.qk_norm_scope = scope;
  kind.qk_norm_bias = bias;
  kind.norm_eps = 1e-5;
  kind.norm_before_rope = beforeRope;
  kind.rope.style = RopeStyle::Neox;
  kind.rope.rotary_dim = 128;
  ModelConfig model;
  model.model_type = "test";
  model.num_layers = 1;
  model.kinds = {kind};
  return model;
}

/// The function's arguments: attn.arg name -> shape.
std::map<std::string, std::vector<int64_t>> arguments(mlir::func::FuncOp f) {
  std::map<std::string, std::vector<int64_t>> args;
  for (unsigned i = 0; i < f.getNumArguments(); ++i) {
    auto name = f.getArgAttrOfType<mlir::StringAttr>(i, "attn.arg");
    auto type = mlir::cast<mlir::RankedTensorType>(f.getArgument(i).getType());
    args[name.str()] = std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
  }
  return args;
}

struct Built {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<attn::RmsNormOp> norms;
  std::map<std::string, std::vector<int64_t>> args;
  /// Whether the first norm's input is the split's q (before rope).
  bool normBeforeRope = false;
};

void build(Built &b, const ModelConfig &model, int64_t tp = 1) {
  LayerBuildOptions options;
  options.tp = tp;
  auto result = buildModelModule(b.context, model, options);
  ASSERT_TRUE(result.ok()) << result.error().message();
  b.module = std::move(*result);
  auto f = *b.module->getOps<mlir::func::FuncOp>().begin();
  f.walk([&](attn::RmsNormOp op) { b.norms.push_back(op); });
  b.args = arguments(f);
  if (!b.norms.empty())
    b.normBeforeRope = b.norms[0].getInput().getDefiningOp<attn::QkvSplitOp>() != nullptr;
}

TEST(LayerBuilderNorms, ProjectionScopeWeightsCoverEveryHead) {
  Built b;
  build(b, config(NormStyle::Plain, NormScope::Projection, false));
  ASSERT_EQ(b.norms.size(), 2u);
  EXPECT_EQ(b.norms[0].getScope(), attn::NormScope::projection);
  EXPECT_EQ(b.norms[0].getStyle(), attn::NormStyle::rms);
  EXPECT_EQ(b.args["q_norm_weight"], (std::vector<int64_t>{32 * 128}));
  EXPECT_EQ(b.args["k_norm_weight"], (std::vector<int64_t>{8 * 128}));
  EXPECT_EQ(b.args.count("q_norm_bias"), 0u);
  EXPECT_TRUE(b.normBeforeRope);
}

TEST(LayerBuilderNorms, HeadWeightsLayerNormWithBias) {
  Built b;
  build(b, config(NormStyle::LayerNorm, NormScope::HeadWeights, true));
  ASSERT_EQ(b.norms.size(), 2u);
  EXPECT_EQ(b.norms[0].getStyle(), attn::NormStyle::layernorm);
  EXPECT_EQ(b.norms[1].getScope(), attn::NormScope::head_weights);
  EXPECT_TRUE(b.norms[0].getBias() && b.norms[1].getBias());
  EXPECT_EQ(b.args["q_norm_weight"], (std::vector<int64_t>{32, 128}));
  EXPECT_EQ(b.args["k_norm_bias"], (std::vector<int64_t>{8, 128}));
}

TEST(LayerBuilderNorms, LayerNormWithoutBiasHasNoBiasArgument) {
  Built b;
  build(b, config(NormStyle::LayerNorm, NormScope::Head, false));
  ASSERT_EQ(b.norms.size(), 2u);
  EXPECT_FALSE(b.norms[0].getBias());
  EXPECT_EQ(b.args["q_norm_weight"], (std::vector<int64_t>{128}));
  EXPECT_EQ(b.args.count("q_norm_bias") + b.args.count("k_norm_bias"), 0u);
}

TEST(LayerBuilderNorms, UnweightedAfterRopeHasNoWeights) {
  Built b;
  build(b, config(NormStyle::Unweighted, NormScope::Head, false,
                  /*beforeRope=*/false));
  ASSERT_EQ(b.norms.size(), 2u);
  EXPECT_EQ(b.norms[0].getStyle(), attn::NormStyle::unweighted);
  EXPECT_FALSE(b.norms[0].getWeight());
  EXPECT_EQ(b.args.count("q_norm_weight") + b.args.count("k_norm_weight"), 0u);
  EXPECT_TRUE(b.norms[0].getInput().getDefiningOp<attn::RopeOp>());
}

TEST(LayerBuilderNorms, NoNormNoOp) {
  Built b;
  build(b, config(NormStyle::None, NormScope::Head, false));
  EXPECT_TRUE(b.norms.empty());
  EXPECT_EQ(b.args.count("q_norm_weight"), 0u);
}

TEST(LayerBuilderNorms, ProjectionScopeRefusesTensorParallelism) {
  mlir::MLIRContext context;
  LayerBuildOptions options;
  options.tp = 2;
  auto result = buildModelModule(
      context, config(NormStyle::Plain, NormScope::Projection, false), options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().field, "tp");
  EXPECT_NE(result.error().rule.find("scope projection"), std::string::npos)
      << result.error().rule;
  // Per-head scopes split fine.
  Built b;
  build(b, config(NormStyle::LayerNorm, NormScope::HeadWeights, false), 2);
  EXPECT_EQ(b.args["q_norm_weight"], (std::vector<int64_t>{16, 128}));
}

/// A hand-built MLA kind: Mistral 4's shape (H 32, R 256, P 64, nope 64,
/// Dv 128), neox rope, pages of 16.
ModelConfig mlaConfig() {
  LayerKind kind;
  kind.name = "full_attention";
  kind.layers = {0, 1};
  kind.heads = HeadShape{32, 32, 128, 128, GateLayout::None};
  kind.rope.style = RopeStyle::Neox;
  kind.rope.rotary_dim = 64;
  kind.rope.rotary_offset = 64;
  kind.softmax_scale = 0.25;
  MlaConfig mla;
  mla.kv_lora_rank = 256;
  mla.block_size = 16;
  mla.latent_scale = 1.5;
  kind.mla = mla;
  ModelConfig model;
  model.model_type = "test_mla";
  model.num_layers = 2;
  model.kinds = {kind};
  return model;
}

TEST(LayerBuilderMla, FourOpsOverOneLatentCache) {
  mlir::MLIRContext context;
  LayerBuildOptions options;
  options.tp = 4;
  options.rank = 1;
  options.kv_dtype = KvCacheDtype::FP8E4M3;
  auto result = buildModelModule(context, mlaConfig(), options);
  ASSERT_TRUE(result.ok()) << result.error().message();
  auto f = *(*result)->getOps<mlir::func::FuncOp>().begin();
  auto args = arguments(f);
  // 32 heads over tp 4: 8 per rank; the latent (256 + 64 = 320) is whole.
  EXPECT_EQ(args["kv_a"], (std::vector<int64_t>{mlir::ShapedType::kDynamic, 320}));
  EXPECT_EQ(args["q_rope"], (std::vector<int64_t>{mlir::ShapedType::kDynamic, 8, 64}));
  EXPECT_EQ(args["kv_norm_weight"], (std::vector<int64_t>{256}));
  EXPECT_EQ(args["latent_cache"],
            (std::vector<int64_t>{mlir::ShapedType::kDynamic, 16, 320}));
  EXPECT_EQ(args["absorbed_query"],
            (std::vector<int64_t>{mlir::ShapedType::kDynamic, 8, 320}));
  EXPECT_EQ(args["prefill_query"],
            (std::vector<int64_t>{mlir::ShapedType::kDynamic, 8, 128}));
  EXPECT_EQ(args["prefill_value"],
            (std::vector<int64_t>{mlir::ShapedType::kDynamic, 8, 128}));
  EXPECT_EQ(args["cache_scale"], (std::vector<int64_t>{}));
  EXPECT_EQ(args.count("qkv"), 0u);
  std::vector<attn::MlaPreprocessOp> pre;
  std::vector<attn::LatentAttentionOp> decode;
  std::vector<attn::VarlenAttentionOp> prefill;
  std::vector<attn::LatentGatherOp> gather;
  f.walk([&](attn::MlaPreprocessOp op) { pre.push_back(op); });
  f.walk([&](attn::LatentAttentionOp op) { decode.push_back(op); });
  f.walk([&](attn::VarlenAttentionOp op) { prefill.push_back(op); });
  f.walk([&](attn::LatentGatherOp op) { gather.push_back(op); });
  ASSERT_EQ(pre.size(), 1u);
  ASSERT_EQ(decode.size(), 1u);
  ASSERT_EQ(prefill.size(), 1u);
  ASSERT_EQ(gather.size(), 1u);
  EXPECT_EQ(pre[0].getNumHeads(), 8u);
  EXPECT_EQ(pre[0].getKvLoraRank(), 256u);
  EXPECT_EQ(pre[0].getRopeHeadDim(), 64u);
  EXPECT_EQ(pre[0].getLatentScale().convertToDouble(), 1.5);
  EXPECT_EQ(pre[0].getNormEps().convertToDouble(), 1e-6);
  EXPECT_EQ(pre[0].getRopeStyle(), attn::RopeStyle::neox);
  EXPECT_FALSE(pre[0].getRopeDeinterleave());
  EXPECT_FALSE(pre[0].getScalingAttr());
  EXPECT_TRUE(pre[0].getCacheScale());
  // The decode and the gather read the cache the preprocess wrote.
  EXPECT_EQ(decode[0].getLatentCache(), pre[0].getLatentCacheOut());
  EXPECT_EQ(gather[0].getLatentCache(), pre[0].getLatentCacheOut());
  EXPECT_EQ(decode[0].getSoftmaxScale().convertToDouble(), 0.25);
  EXPECT_EQ(prefill[0].getSoftmaxScale().convertToDouble(), 0.25);
  EXPECT_TRUE(prefill[0].getCausal());
  EXPECT_EQ(f->getAttrOfType<mlir::DenseI64ArrayAttr>("attn.layers").asArrayRef(),
            (llvm::ArrayRef<int64_t>{0, 1}));
}

TEST(LayerBuilderMla, HandBuiltInvalidLatentIsAnError) {
  mlir::MLIRContext context;
  ModelConfig model = mlaConfig();
  model.kinds[0].mla->block_size = 32;
  auto result = buildModelModule(context, model, LayerBuildOptions{});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().field, "block_size");
  EXPECT_NE(result.error().rule.find("(layer kind full_attention)"),
            std::string::npos)
      << result.error().rule;
  model = mlaConfig();
  model.kinds[0].heads.num_kv_heads = 8;
  result = buildModelModule(context, model, LayerBuildOptions{});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().rule.find("num_kv_heads = num_q_heads"),
            std::string::npos)
      << result.error().rule;
}

} // namespace
