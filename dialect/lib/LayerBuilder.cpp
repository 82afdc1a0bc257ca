//===- LayerBuilder.cpp - Model description to attn IR --------------------===//
#include "attnc/Dialect/Attn/LayerBuilder.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Plan/KernelLimits.h"
#include "attnc/Plan/Layout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"

#include <cmath>

using namespace mlir;

namespace attnc {
namespace {

/// The model library and the dialect spell the same enumerations; the
/// dialect's are generated from ODS. These conversions are the only place
/// that maps one onto the other.
attn::GateLayout toAttr(GateLayout layout) {
  switch (layout) {
  case GateLayout::None:
    return attn::GateLayout::none;
  case GateLayout::Concatenated:
    return attn::GateLayout::qkvg;
  case GateLayout::InterleavedWithQ:
    return attn::GateLayout::interleaved;
  case GateLayout::HeadScalar:
    return attn::GateLayout::head_scalar;
  }
  return attn::GateLayout::none;
}

attn::RopeScalingKind toAttr(RopeScalingKind kind) {
  switch (kind) {
  case RopeScalingKind::None:
    return attn::RopeScalingKind::none;
  case RopeScalingKind::Linear:
    return attn::RopeScalingKind::linear;
  case RopeScalingKind::Llama3:
    return attn::RopeScalingKind::llama3;
  case RopeScalingKind::Yarn:
    return attn::RopeScalingKind::yarn;
  case RopeScalingKind::DynamicNtk:
    return attn::RopeScalingKind::dynamic;
  case RopeScalingKind::LongRope:
    return attn::RopeScalingKind::longrope;
  }
  return attn::RopeScalingKind::none;
}

/// NormStyle::None has no op, so no attribute value.
attn::NormStyle toAttr(NormStyle style) {
  switch (style) {
  case NormStyle::None:
  case NormStyle::Plain:
    return attn::NormStyle::rms;
  case NormStyle::Gemma:
    return attn::NormStyle::gemma;
  case NormStyle::Unweighted:
    return attn::NormStyle::unweighted;
  case NormStyle::LayerNorm:
    return attn::NormStyle::layernorm;
  }
  return attn::NormStyle::rms;
}

attn::NormScope toAttr(NormScope scope) {
  switch (scope) {
  case NormScope::Head:
    return attn::NormScope::head;
  case NormScope::HeadWeights:
    return attn::NormScope::head_weights;
  case NormScope::Projection:
    return attn::NormScope::projection;
  }
  return attn::NormScope::head;
}

Result<Type> activationType(MLIRContext &context, const std::string &dtype,
                              const std::string &field) {
  if (dtype == "bf16")
    return Type(BFloat16Type::get(&context));
  if (dtype == "fp16")
    return Type(Float16Type::get(&context));
  if (dtype == "fp32")
    return Type(Float32Type::get(&context));
  return Status{field, "must be bf16, fp16 or fp32, got '" + dtype + "'"};
}

/// Builds one layer kind's function.
class KindBuilder {
public:
  KindBuilder(OpBuilder &builder, const LayerKind &kind, const HeadShape &local,
              Type activation, Type cacheElement, int64_t blockSize)
      : b(builder), kind(kind), heads(local), activation(activation),
        cacheElement(cacheElement), blockSize(blockSize) {}

  func::FuncOp build(Location loc) {
    if (kind.mla)
      return buildMla(loc);
    MLIRContext *context = b.getContext();
    int64_t dyn = ShapedType::kDynamic;
    Type i64 = b.getI64Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
    FusedLayout layout = *computeFusedLayout(heads);
    int64_t hq = heads.num_q_heads, hkv = heads.num_kv_heads;
    int64_t dqk = heads.qk_head_dim, dv = heads.v_head_dim;

    auto tensor = [](ArrayRef<int64_t> shape, Type element) -> Type {
      return RankedTensorType::get(shape, element);
    };
    Type kCacheType = tensor({dyn, blockSize, hkv, dqk}, cacheElement);
    Type vCacheType = tensor({dyn, blockSize, hkv, dv}, cacheElement);
    Type outputType = tensor({dyn, hq, dv}, activation);

    // Arguments in a fixed order; optional ones only when the feature exists.
    addArg("qkv", tensor({dyn, layout.width}, activation));
    bool hasRope = kind.rope.style != RopeStyle::None && kind.rope.rotary_dim > 0;
    bool hasTemperature = kind.query_temperature.floor_scale > 0;
    if (hasRope || hasTemperature)
      addArg("positions", tensor({dyn}, i64));
    addArg("slot_mapping", tensor({dyn}, i64));
    addArg("k_cache", kCacheType);
    addArg("v_cache", vCacheType);
    addArg("block_tables", tensor({dyn, dyn}, i32));
    addArg("seq_lens", tensor({dyn}, i32));
    addArg("query_start_loc", tensor({dyn}, i32));
    bool hasNorm = kind.qk_norm != NormStyle::None;
    bool hasNormWeight = hasNorm && kind.qk_norm != NormStyle::Unweighted;
    bool hasNormBias = hasNorm && kind.qk_norm == NormStyle::LayerNorm &&
                       kind.qk_norm_bias;
    // The norm weights' (and biases') shape for q (hq heads) or k (hkv).
    auto normWeightType = [&](int64_t numHeads) -> Type {
      switch (kind.qk_norm_scope) {
      case NormScope::Head:
        return tensor({dqk}, activation);
      case NormScope::HeadWeights:
        return tensor({numHeads, dqk}, activation);
      case NormScope::Projection:
        return tensor({numHeads * dqk}, activation);
      }
      return Type();
    };
    if (hasNormWeight) {
      addArg("q_norm_weight", normWeightType(hq));
      addArg("k_norm_weight", normWeightType(hkv));
    }
    if (hasNormBias) {
      addArg("q_norm_bias", normWeightType(hq));
      addArg("k_norm_bias", normWeightType(hkv));
    }
    if (kind.sinks)
      addArg("sinks", tensor({hq}, f32));
    bool fp8 = isa<Float8E4M3FNType>(cacheElement);
    if (fp8) {
      addArg("k_scale", tensor({}, f32));
      addArg("v_scale", tensor({}, f32));
    }

    auto function = func::FuncOp::create(
        b, loc, kind.name,
        FunctionType::get(context, argTypes,
                          {outputType, kCacheType, vCacheType}));
    function.setAllArgAttrs(argAttrs);
    function->setAttr("attn.layers", b.getDenseI64ArrayAttr(kind.layers));
    Block *body = function.addEntryBlock();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    auto arg = [&](StringRef name) -> Value {
      for (auto [i, argName] : llvm::enumerate(argNames))
        if (argName == name)
          return body->getArgument(i);
      return nullptr;
    };

    SmallVector<Type> splitTypes = {tensor({dyn, hq, dqk}, activation),
                                    tensor({dyn, hkv, dqk}, activation),
                                    tensor({dyn, hkv, dv}, activation)};
    Type gateType = heads.gate == GateLayout::None ? Type()
                    : heads.gate == GateLayout::HeadScalar
                        ? tensor({dyn, hq, 1}, activation)
                        : tensor({dyn, hq, dv}, activation);
    auto split = attn::QkvSplitOp::create(
        b, loc, splitTypes[0], splitTypes[1], splitTypes[2], gateType,
        arg("qkv"), hq, hkv, dqk, dv, toAttr(heads.gate));
    Value q = split.getQ(), k = split.getK(), v = split.getV();

    auto norm = [&] {
      llvm::APFloat eps(kind.norm_eps);
      attn::NormStyle style = toAttr(kind.qk_norm);
      attn::NormScope scope = toAttr(kind.qk_norm_scope);
      q = attn::RmsNormOp::create(b, loc, q, arg("q_norm_weight"),
                                  arg("q_norm_bias"), eps, style, scope);
      k = attn::RmsNormOp::create(b, loc, k, arg("k_norm_weight"),
                                  arg("k_norm_bias"), eps, style, scope);
    };
    if (hasNorm && kind.norm_before_rope)
      norm();
    if (hasRope) {
      attn::RopeScalingAttr scaling = scalingAttr();
      auto style = kind.rope.style == RopeStyle::Gptj ? attn::RopeStyle::gptj
                                                      : attn::RopeStyle::neox;
      auto rope = [&](Value x) -> Value {
        return attn::RopeOp::create(b, loc, x, arg("positions"), style,
                                    kind.rope.rotary_dim,
                                    kind.rope.rotary_offset,
                                    llvm::APFloat(kind.rope.theta), scaling);
      };
      q = rope(q);
      k = rope(k);
    }
    if (hasNorm && !kind.norm_before_rope)
      norm();
    if (hasTemperature)
      q = attn::QueryTemperatureOp::create(
          b, loc, q, arg("positions"),
          llvm::APFloat(kind.query_temperature.floor_scale),
          llvm::APFloat(kind.query_temperature.scale));

    auto write = attn::CacheWriteOp::create(
        b, loc, k, v, arg("slot_mapping"), arg("k_cache"), arg("v_cache"),
        arg("k_scale"), arg("v_scale"));
    double scale = kind.softmax_scale > 0
                       ? kind.softmax_scale
                       : 1.0 / std::sqrt(static_cast<double>(dqk));
    Value output = attn::PagedAttentionOp::create(
        b, loc, outputType, q, write.getKCacheOut(), write.getVCacheOut(),
        arg("block_tables"), arg("seq_lens"), arg("query_start_loc"),
        arg("sinks"), arg("k_scale"), arg("v_scale"), llvm::APFloat(scale),
        /*causal=*/true, static_cast<uint64_t>(kind.sliding_window),
        llvm::APFloat(kind.logit_softcap), llvm::APFloat(kind.value_scale),
        static_cast<uint64_t>(kind.attention_chunk), /*schedule=*/nullptr);
    if (Value gate = split.getGate())
      output = attn::OutputGateOp::create(b, loc, output, gate);
    func::ReturnOp::create(
        b, loc,
        ValueRange{output, write.getKCacheOut(), write.getVCacheOut()});
    return function;
  }

private:
  /// The rope scaling attribute (null for none), as attn.rope and
  /// attn.mla_preprocess take it.
  attn::RopeScalingAttr scalingAttr() {
    const RopeScaling &s = kind.rope.scaling;
    if (s.kind == RopeScalingKind::None)
      return attn::RopeScalingAttr();
    return attn::RopeScalingAttr::get(
        b.getContext(), toAttr(s.kind), s.factor, s.original_max_position,
        s.low_freq_factor, s.high_freq_factor, s.beta_fast, s.beta_slow,
        s.mscale, s.mscale_all_dim, s.truncate,
        s.kind == RopeScalingKind::LongRope
            ? b.getDenseF64ArrayAttr(s.short_factor)
            : DenseF64ArrayAttr(),
        s.kind == RopeScalingKind::LongRope
            ? b.getDenseF64ArrayAttr(s.long_factor)
            : DenseF64ArrayAttr(),
        s.attention_factor);
  }

  /// An MLA kind: the four MLA ops over one latent cache. The preprocess
  /// writes the cache; the absorbed decode and the gather read the cache it
  /// wrote; the decompressed prefill reads the engine's up-projected K/V.
  /// H is this rank's share of the query heads; the latent is never split.
  func::FuncOp buildMla(Location loc) {
    MLIRContext *context = b.getContext();
    const MlaConfig &mla = *kind.mla;
    int64_t dyn = ShapedType::kDynamic;
    Type i64 = b.getI64Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
    LatentCacheLayout latent = *computeLatentCacheLayout(
        mla.kv_lora_rank, kind.rope.rotary_dim, mla.block_size);
    int64_t h = heads.num_q_heads;
    int64_t rank = latent.kv_lora_rank, rope = latent.rope_head_dim;
    int64_t width = latent.row_width;
    auto tensor = [](ArrayRef<int64_t> shape, Type element) -> Type {
      return RankedTensorType::get(shape, element);
    };
    Type rowsType = tensor({dyn, width}, activation);
    Type qRopeType = tensor({dyn, h, rope}, activation);
    Type cacheType = tensor({dyn, latent.block_size, width}, cacheElement);
    Type decodeType = tensor({dyn, h, rank}, activation);
    Type prefillType = tensor({dyn, h, heads.v_head_dim}, activation);

    // Arguments in a fixed order; the scale only with an fp8 cache.
    addArg("kv_a", rowsType);
    addArg("q_rope", qRopeType);
    addArg("slot_mapping", tensor({dyn}, i64));
    addArg("positions", tensor({dyn}, i64));
    addArg("kv_norm_weight", tensor({rank}, activation));
    addArg("latent_cache", cacheType);
    addArg("absorbed_query", tensor({dyn, h, width}, activation));
    addArg("block_tables", tensor({dyn, dyn}, i32));
    addArg("seq_lens", tensor({dyn}, i32));
    addArg("query_start_loc", tensor({dyn}, i32));
    addArg("prefill_query", tensor({dyn, h, heads.qk_head_dim}, activation));
    addArg("prefill_key", tensor({dyn, h, heads.qk_head_dim}, activation));
    addArg("prefill_value", tensor({dyn, h, heads.v_head_dim}, activation));
    addArg("cu_seqlens_q", tensor({dyn}, i32));
    addArg("cu_seqlens_k", tensor({dyn}, i32));
    addArg("context_cu_seqlens", tensor({dyn}, i32));
    if (isa<Float8E4M3FNType>(cacheElement))
      addArg("cache_scale", tensor({}, f32));

    auto function = func::FuncOp::create(
        b, loc, kind.name,
        FunctionType::get(context, argTypes,
                          {rowsType, qRopeType, cacheType, decodeType,
                           prefillType, rowsType}));
    function.setAllArgAttrs(argAttrs);
    function->setAttr("attn.layers", b.getDenseI64ArrayAttr(kind.layers));
    Block *body = function.addEntryBlock();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    auto arg = [&](StringRef name) -> Value {
      for (auto [i, argName] : llvm::enumerate(argNames))
        if (argName == name)
          return body->getArgument(i);
      return nullptr;
    };

    auto style = kind.rope.style == RopeStyle::Gptj ? attn::RopeStyle::gptj
                                                    : attn::RopeStyle::neox;
    auto preprocess = attn::MlaPreprocessOp::create(
        b, loc, rowsType, qRopeType, cacheType, arg("kv_a"), arg("q_rope"),
        arg("slot_mapping"), arg("positions"), arg("kv_norm_weight"),
        arg("latent_cache"), arg("cache_scale"), static_cast<uint64_t>(h),
        static_cast<uint64_t>(rank), static_cast<uint64_t>(rope),
        llvm::APFloat(mla.kv_norm_eps), llvm::APFloat(mla.latent_scale),
        style, mla.rope_deinterleave, llvm::APFloat(kind.rope.theta),
        scalingAttr(), /*schedule=*/nullptr);
    Value cache = preprocess.getLatentCacheOut();
    double scale = kind.softmax_scale > 0
                       ? kind.softmax_scale
                       : 1.0 / std::sqrt(static_cast<double>(
                                   heads.qk_head_dim));
    Value decode = attn::LatentAttentionOp::create(
        b, loc, decodeType, arg("absorbed_query"), cache,
        arg("block_tables"), arg("seq_lens"), arg("query_start_loc"),
        arg("cache_scale"), static_cast<uint64_t>(rank),
        llvm::APFloat(scale), /*causal=*/true, /*schedule=*/nullptr);
    Value prefill = attn::VarlenAttentionOp::create(
        b, loc, prefillType, arg("prefill_query"), arg("prefill_key"),
        arg("prefill_value"), arg("cu_seqlens_q"), arg("cu_seqlens_k"),
        llvm::APFloat(scale), /*causal=*/true, /*schedule=*/nullptr);
    Value context_rows = attn::LatentGatherOp::create(
        b, loc, rowsType, cache, arg("block_tables"),
        arg("context_cu_seqlens"), arg("cache_scale"));
    func::ReturnOp::create(b, loc,
                           ValueRange{preprocess.getLatent(),
                                      preprocess.getQRopeOut(), cache, decode,
                                      prefill, context_rows});
    return function;
  }

  void addArg(StringRef name, Type type) {
    argNames.push_back(name.str());
    argTypes.push_back(type);
    argAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr("attn.arg", b.getStringAttr(name))));
  }

  OpBuilder &b;
  const LayerKind &kind;
  HeadShape heads;
  Type activation, cacheElement;
  int64_t blockSize;
  SmallVector<std::string> argNames;
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
};

} // namespace

Result<OwningOpRef<ModuleOp>>
buildModelModule(MLIRContext &context, const ModelConfig &config,
                 const LayerBuildOptions &options) {
  context.loadDialect<attn::AttnDialect, func::FuncDialect>();
  std::string dtype = options.dtype.empty() ? config.dtype : options.dtype;
  Result<Type> activation = activationType(
      context, dtype, "dtype");
  if (!activation)
    return activation.error();
  Type cacheElement = *activation;
  switch (options.kv_dtype) {
  case KvCacheDtype::SameAsActivation:
    break;
  case KvCacheDtype::BF16:
    cacheElement = BFloat16Type::get(&context);
    break;
  case KvCacheDtype::FP16:
    cacheElement = Float16Type::get(&context);
    break;
  case KvCacheDtype::FP8E4M3:
    cacheElement = Float8E4M3FNType::get(&context);
    break;
  }
  if (cacheElement != *activation && !isa<Float8E4M3FNType>(cacheElement))
    return Status{"kv_dtype", "a bf16/fp16 cache must match the activation "
                             "dtype (" + dtype + ")"};
  if (Status block = plan::checkBlockSize(options.block_size); !block.ok())
    return block;

  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  module->getOperation()->setAttr("attn.model_type",
                                  builder.getStringAttr(config.model_type));
  if (options.tp > 1)
    module->getOperation()->setAttr(
        "attn.tensor_parallel",
        builder.getDenseI64ArrayAttr({options.tp, options.rank}));
  builder.setInsertionPointToEnd(module->getBody());
  for (const LayerKind &kind : config.kinds) {
    // A rank holds some of the heads; the projection's statistics need all.
    if (options.tp > 1 && kind.qk_norm != NormStyle::None &&
        kind.qk_norm_scope == NormScope::Projection)
      return Status{"tp", "layer kind " + kind.name +
                              ": a q/k norm over the whole projection "
                              "(scope projection) needs every head on one "
                              "rank; tensor parallelism (tp " +
                              std::to_string(options.tp) +
                              ") would need an all-reduce"};
    if (kind.mla) {
      // A hand-built config is not checked by the spec reader: the latent
      // must be describable and the heads the decompressed form.
      Result<LatentCacheLayout> latent = computeLatentCacheLayout(
          kind.mla->kv_lora_rank, kind.rope.rotary_dim, kind.mla->block_size);
      if (!latent)
        return Status{latent.status().field,
                      latent.status().rule + " (layer kind " + kind.name +
                          ")"};
      if (kind.heads.num_kv_heads != kind.heads.num_q_heads ||
          kind.rope.style == RopeStyle::None ||
          kind.rope.rotary_offset + kind.rope.rotary_dim !=
              kind.heads.qk_head_dim)
        return Status{"layer_kinds",
                      "layer kind " + kind.name +
                          ": an MLA kind needs num_kv_heads = num_q_heads "
                          "and a rope over the last qk_rope_head_dim dims "
                          "(rotary_offset + rotary_dim = qk_head_dim)"};
    }
    Result<RankShard> shard = computeRankShard(
        kind.heads, options.tp, options.rank, CheckpointForm::Fused);
    if (!shard) {
      Status error = shard.error();
      error.rule += " (layer kind " + kind.name + ")";
      return error;
    }
    KindBuilder(builder, kind, shard->local.shape, *activation, cacheElement,
                options.block_size)
        .build(loc);
  }
  if (failed(verify(*module)))
    return Status{"", "internal error: the built module does not verify"};
  return std::move(module);
}

} // namespace attnc
