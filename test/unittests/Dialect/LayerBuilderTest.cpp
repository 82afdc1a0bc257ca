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

} // namespace
