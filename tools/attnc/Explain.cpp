//===- Explain.cpp - `attnc explain`: the plan and the floor of each kernel ===//
#include "Explain.h"

#include "CubinResources.h"

#include "attnc/Codegen/CudaEmitter.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Jit/ModelCompiler.h"
#include "attnc/Plan/Layout.h"
#include "attnc/Plan/SplitKv.h"
#include "attnc/Runtime/Context.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <optional>

namespace attnc::tools {
namespace {

using nlohmann::json;

/// Bytes of an element type as the emission attributes spell it.
int64_t elementBytes(llvm::StringRef type) {
  if (type == "fp8_e4m3" || type == "fp8_e5m2")
    return 1;
  if (type == "f32" || type == "fp32")
    return 4;
  return 2;
}

double micros(double seconds) { return seconds * 1e6; }

/// The launch grid of an ABI for a workload, with the symbols the attnc
/// kernels' grid rules name; nullopt when a rule names another symbol.
std::optional<std::array<int64_t, 3>>
evaluateGrid(const runtime::KernelAbi &abi,
             const std::map<std::string, int64_t> &symbols, bool busyOnly) {
  std::array<int64_t, 3> grid{};
  for (int axis = 0; axis < 3; ++axis) {
    const runtime::GridDimRule &rule = abi.grid[size_t(axis)];
    if (rule.isConstant()) {
      grid[size_t(axis)] = rule.constant;
      continue;
    }
    auto value = symbols.find(rule.value);
    if (value == symbols.end())
      return std::nullopt;
    int64_t rows =
        (value->second * rule.multiplier + rule.divisor - 1) / rule.divisor;
    int64_t plus = 0;
    if (rule.hasPlus()) {
      auto p = symbols.find(rule.plus);
      if (p == symbols.end())
        return std::nullopt;
      plus = p->second;
    }
    // Busy blocks: a "plus" rule's spare blocks (one per sequence) surely
    // have rows only where the rows do not (the runtime's LaunchChecker
    // counts them the same way).
    grid[size_t(axis)] =
        rule.hasPlus() ? (busyOnly ? std::max(rows, plus) : rows + plus) : rows;
  }
  return grid;
}

/// Whether the kernel splits keys over grid z (the tensor-core form).
bool abiSplits(const runtime::KernelAbi &abi) {
  return abi.grid[2].value == "num_kv_splits";
}

json featuresOf(const LayerKind &kind, const std::string &cacheType) {
  json f;
  f["qk_norm"] = {{"present", kind.qk_norm != NormStyle::None}};
  if (kind.qk_norm != NormStyle::None) {
    f["qk_norm"]["style"] = normStyleName(kind.qk_norm);
    f["qk_norm"]["scope"] = normScopeName(kind.qk_norm_scope);
    f["qk_norm"]["bias"] = kind.qk_norm_bias;
    f["qk_norm"]["eps"] = kind.norm_eps;
    f["qk_norm"]["after_rope"] = !kind.norm_before_rope;
  }
  const RopeConfig &rope = kind.rope;
  f["rope"] = {{"present", rope.style != RopeStyle::None}};
  if (rope.style != RopeStyle::None) {
    f["rope"]["style"] = ropeStyleName(rope.style);
    f["rope"]["rotary_dim"] = rope.rotary_dim;
    f["rope"]["rotary_offset"] = rope.rotary_offset;
    f["rope"]["theta"] = rope.theta;
    f["rope"]["scaling"] = ropeScalingKindName(rope.scaling.kind);
    if (rope.scaling.kind != RopeScalingKind::None)
      f["rope"]["factor"] = rope.scaling.factor;
  }
  f["gate"] = {{"present", kind.heads.gate != GateLayout::None}};
  if (kind.heads.gate != GateLayout::None)
    f["gate"]["layout"] = gateLayoutName(kind.heads.gate);
  f["attention_chunk"] = {{"present", kind.attention_chunk > 0}};
  if (kind.attention_chunk > 0)
    f["attention_chunk"]["keys"] = kind.attention_chunk;
  f["sliding_window"] = {{"present", kind.sliding_window > 0}};
  if (kind.sliding_window > 0)
    f["sliding_window"]["keys"] = kind.sliding_window;
  f["sinks"] = {{"present", kind.sinks}};
  f["logit_softcap"] = {{"present", kind.logit_softcap != 0}};
  if (kind.logit_softcap != 0)
    f["logit_softcap"]["cap"] = kind.logit_softcap;
  f["value_scale"] = {{"present", kind.value_scale != 1.0}};
  if (kind.value_scale != 1.0)
    f["value_scale"]["scale"] = kind.value_scale;
  f["query_temperature"] = {{"present",
                             kind.query_temperature.floor_scale != 0}};
  if (kind.query_temperature.floor_scale != 0) {
    f["query_temperature"]["floor_scale"] = kind.query_temperature.floor_scale;
    f["query_temperature"]["scale"] = kind.query_temperature.scale;
  }
  bool fp8 = cacheType.rfind("fp8", 0) == 0;
  f["fp8_cache"] = {{"present", fp8}};
  if (fp8)
    f["fp8_cache"]["type"] = cacheType;
  return f;
}

json workJson(const plan::KernelWork &work) {
  return {{"read_bytes", work.read_bytes},
          {"written_bytes", work.written_bytes},
          {"flops", work.flops},
          {"memory_us", micros(work.memory_seconds)},
          {"compute_us", micros(work.compute_seconds)},
          {"floor_us", micros(work.floorSeconds())},
          {"bound", work.memoryBound() ? "memory" : "compute"}};
}

/// Collects MLIR errors, so that a failing stage becomes one Status.
struct Diagnostics {
  explicit Diagnostics(mlir::MLIRContext &context)
      : handler(&context, [this](mlir::Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error)
            messages.push_back(diagnostic.str());
          return mlir::success();
        }) {}
  Status status(const std::string &field, const std::string &what) const {
    std::string rule = what;
    for (const std::string &m : messages)
      rule += (rule.empty() ? "" : ": ") + m;
    return Status(field, rule);
  }
  std::vector<std::string> messages;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace

Result<json> explainModel(const ModelConfig &config,
                          const ExplainOptions &options) {
  if (Status s = plan::checkWorkload(options.workload); !s.ok())
    return s;
  // The plan: the pipeline and the emitter's preparation, then the ABIs.
  mlir::MLIRContext context;
  auto module = buildModelModule(context, config, options.layer);
  if (!module)
    return module.status();
  Diagnostics diagnostics(context);
  PipelineOptions pipeline;
  pipeline.arch = options.arch;
  std::vector<PipelineStage> stages = attncPipelineStages(pipeline);
  stages.push_back({"attn-prepare-emission",
                    [] { return createAttnPrepareEmission(); }});
  for (const PipelineStage &stage : stages) {
    mlir::PassManager pm(&context);
    pm.addPass(stage.create());
    if (mlir::failed(pm.run(**module)))
      return diagnostics.status(stage.name, "");
  }
  mlir::FailureOr<std::vector<EmittedKernel>> emitted =
      emitCudaKernels(**module);
  if (mlir::failed(emitted))
    return Status(StatusCode::Internal, "codegen", "CUDA emission failed");

  // The binaries: NVRTC or the kernel cache, for the registers.
  std::map<std::string, json> resources;
  if (options.compile) {
    runtime::ContextOptions contextOptions;
    contextOptions.archs = {options.arch};
    auto runtimeContext = runtime::Context::create(contextOptions);
    if (!runtimeContext)
      return runtimeContext.status();
    jit::ModelCompileOptions compileOptions;
    compileOptions.arch = options.arch;
    compileOptions.layer = options.layer;
    auto model = jit::compileModel(**runtimeContext, config, compileOptions);
    if (!model)
      return model.status();
    for (const jit::CompiledKernel &kernel : model->kernels) {
      const runtime::KernelBinary *binary =
          kernel.set ? kernel.set->binaryForArch(options.arch) : nullptr;
      if (!binary)
        return Status(StatusCode::Internal, kernel.name,
                      "no binary for " + options.arch);
      Result<KernelResources> r = readKernelResources(binary->cubin, kernel.name);
      if (!r)
        return Status(r.status().code(), kernel.name + ".cubin",
                      r.status().message());
      resources[kernel.name] = {
          {"registers", r->registers},
          {"stack_frame_bytes", r->stack_frame_bytes},
          {"min_stack_bytes", r->min_stack_bytes},
          {"cubin_bytes", binary->cubin.size()},
          {"build", runtime::buildOutcomeName(binary->report.outcome)},
          {"nvrtc_version", binary->nvrtc_version}};
    }
  }

  const plan::Workload &workload = options.workload;
  const std::map<std::string, int64_t> symbols = {
      {"num_tokens", workload.queryTokens()}, {"num_seqs", workload.batch}};

  json kinds = json::array();
  double modelFloorUs = 0;
  for (const LayerKind &kind : config.kinds) {
    Result<RankShard> shard =
        computeRankShard(kind.heads, options.layer.tp, options.layer.rank,
                         CheckpointForm::Separate);
    if (!shard)
      return shard.status();
    const HeadShape &heads = shard->local.shape;
    json kindJson = {
        {"name", kind.name},
        {"layers", kind.layers},
        {"num_layers", kind.layers.size()},
        {"heads",
         {{"num_q_heads", heads.num_q_heads},
          {"num_kv_heads", heads.num_kv_heads},
          {"group_size", heads.num_q_heads / heads.num_kv_heads},
          {"qk_head_dim", heads.qk_head_dim},
          {"v_head_dim", heads.v_head_dim},
          {"gate_layout", gateLayoutName(heads.gate)}}},
        {"kernels", json::array()}};
    double layerFloorUs = 0;
    for (const EmittedKernel &kernel : *emitted) {
      if (kernel.layer != kind.name)
        continue;
      auto function = (*module)->lookupSymbol<mlir::func::FuncOp>(kernel.name);
      if (!function)
        return Status(StatusCode::Internal, kernel.name,
                      "no kernel function in the module");
      json k = {{"name", kernel.name},
                {"kind", kernel.kind},
                {"block", {kernel.abi.block[0], kernel.abi.block[1],
                           kernel.abi.block[2]}},
                {"dynamic_shared_memory_bytes",
                 kernel.abi.dynamic_shared_memory_bytes}};
      plan::LayerWorkShape shape;
      shape.heads = heads;
      shape.rope = kind.rope.style != RopeStyle::None ||
                   kind.query_temperature.floor_scale > 0;
      shape.sliding_window = kind.sliding_window;
      shape.attention_chunk = kind.attention_chunk;
      std::optional<plan::KernelWork> work;

      // The split-KV rule of the plan library on the busy blocks of the
      // ABI's grid, and the grid it gives.
      auto splitKv = [&](int64_t targetCtas, int64_t maxSplits) {
        std::map<std::string, int64_t> withSplits = symbols;
        withSplits["num_kv_splits"] = 1;
        auto busyGrid = evaluateGrid(kernel.abi, withSplits, true);
        plan::SplitKvLimits limits{targetCtas, maxSplits};
        int64_t busy = busyGrid ? (*busyGrid)[0] * (*busyGrid)[1] : 0;
        int64_t count = plan::chooseKvSplits(limits, busy);
        k["split_kv"] = {{"rule", plan::kvSplitRuleText(limits)},
                         {"busy_ctas", busy},
                         {"num_kv_splits", count}};
        withSplits["num_kv_splits"] = count;
        auto grid = evaluateGrid(kernel.abi, withSplits, false);
        k["grid"] = grid ? json{(*grid)[0], (*grid)[1], (*grid)[2]} : json();
      };
      // Whether the kernel runs in this workload's phase (an MLA layer has
      // a decode and a prefill attention; the gather serves chunked
      // prefill only): only those count in the layer's floor.
      bool runs = true;

      if (kind.mla) {
        plan::MlaWorkShape mla;
        mla.num_heads = heads.num_q_heads;
        mla.kv_lora_rank = kind.mla->kv_lora_rank;
        mla.rope_head_dim = kind.rope.rotary_dim;
        mla.nope_head_dim = kind.rope.rotary_offset;
        mla.v_head_dim = heads.v_head_dim;
        mla.block_size = kind.mla->block_size;
        mla.activation_bytes = elementBytes(config.dtype);
        mla.cache_bytes = mla.activation_bytes;
        Result<plan::KernelWork> w = Status("kind", "unknown MLA kernel");
        bool decode = workload.phase == plan::Phase::Decode;
        if (kernel.kind == "mla_preprocess") {
          attn::MlaPreprocessOp op;
          function.walk([&](attn::MlaPreprocessOp found) { op = found; });
          auto emission = op ? op->getAttrOfType<attn::MlaPreprocessEmissionAttr>(
                                   kEmissionAttr)
                             : attn::MlaPreprocessEmissionAttr();
          if (!op || !op.getSchedule() || !emission)
            return Status(StatusCode::Internal, kernel.name,
                          "the MLA preprocess op has no schedule or emission");
          attn::MlaPreprocessScheduleAttr s = *op.getSchedule();
          mla.cache_bytes = elementBytes(emission.getCache());
          kindJson["activation"] = emission.getActivation().str();
          kindJson["cache"] = emission.getCache().str();
          kindJson["block_size"] = emission.getBlockSize();
          kindJson["features"] = featuresOf(kind, emission.getCache().str());
          kindJson["latent"] = {{"kv_lora_rank", mla.kv_lora_rank},
                                {"rope_head_dim", mla.rope_head_dim},
                                {"row_bytes", (mla.kv_lora_rank + mla.rope_head_dim) *
                                                  mla.cache_bytes}};
          k["form"] = "cuda_core";
          k["schedule"] = {{"vector_width", s.getVectorWidth()},
                           {"warps_per_token", s.getWarpsPerToken()},
                           {"tokens_per_block", s.getTokensPerBlock()},
                           {"threads_per_block", s.getThreadsPerBlock()},
                           {"min_blocks_per_sm", s.getMinBlocksPerSm()},
                           {"token_steps", s.getTokenSteps()},
                           {"l2_prefetch", s.getL2Prefetch()},
                           {"streaming_stores", s.getStreamingStores()},
                           {"stage_in_shared", s.getStageInShared()}};
          w = plan::mlaPreprocessWork(mla, workload, options.machine);
        } else if (kernel.kind == "latent_attention") {
          attn::LatentAttentionOp op;
          function.walk([&](attn::LatentAttentionOp found) { op = found; });
          if (!op || !op.getSchedule())
            return Status(StatusCode::Internal, kernel.name,
                          "the latent attention op has no schedule");
          attn::LatentAttentionScheduleAttr s = *op.getSchedule();
          kindJson["softmax_scale"] = op.getSoftmaxScaleAttr().getValueAsDouble();
          mla.cache_bytes = elementBytes(kindJson.value("cache", config.dtype));
          k["form"] = "tensor_core";
          k["schedule"] = {{"block_m", s.getBlockM()},
                           {"block_n", s.getBlockN()},
                           {"num_warps", s.getNumWarps()},
                           {"mma", "wgmma"},
                           {"max_kv_splits", s.getMaxKvSplits()},
                           {"target_ctas", s.getTargetCtas()}};
          if (abiSplits(kernel.abi))
            splitKv(s.getTargetCtas(), s.getMaxKvSplits());
          runs = decode;
          w = plan::latentAttentionWork(mla, workload, options.machine);
        } else if (kernel.kind == "varlen_attention") {
          attn::VarlenAttentionOp op;
          function.walk([&](attn::VarlenAttentionOp found) { op = found; });
          if (!op || !op.getSchedule())
            return Status(StatusCode::Internal, kernel.name,
                          "the varlen attention op has no schedule");
          attn::AttentionScheduleAttr s = *op.getSchedule();
          k["form"] = "tensor_core";
          k["schedule"] = {{"block_m", s.getBlockM()},
                           {"block_n", s.getBlockN()},
                           {"num_warps", s.getNumWarps()},
                           {"qk_dim_padded", s.getQkDimPadded()},
                           {"v_dim_padded", s.getVDimPadded()},
                           {"mma", s.getMma().str()},
                           {"max_kv_splits", s.getMaxKvSplits()},
                           {"target_ctas", s.getTargetCtas()}};
          if (abiSplits(kernel.abi)) {
            // The prefill's launch: every sequence's `context` new tokens.
            splitKv(s.getTargetCtas(), s.getMaxKvSplits());
          }
          runs = !decode;
          w = plan::varlenAttentionWork(mla, workload, options.machine);
        } else if (kernel.kind == "latent_gather") {
          mla.cache_bytes = elementBytes(kindJson.value("cache", config.dtype));
          k["form"] = "cuda_core";
          runs = false;
          w = plan::latentGatherWork(mla, workload, options.machine);
        }
        if (!w)
          return w.status();
        work = *w;
        k["in_this_phase"] = runs;
      } else if (kernel.kind == "preprocess") {
        attn::FusedPreprocessOp op;
        function.walk([&](attn::FusedPreprocessOp found) { op = found; });
        auto emission = op ? op->getAttrOfType<attn::PreprocessEmissionAttr>(
                                 kEmissionAttr)
                           : attn::PreprocessEmissionAttr();
        if (!op || !op.getSchedule() || !emission)
          return Status(StatusCode::Internal, kernel.name,
                        "the preprocess op has no schedule or emission");
        attn::PreprocessScheduleAttr s = *op.getSchedule();
        shape.activation_bytes = elementBytes(emission.getActivation());
        shape.cache_bytes = elementBytes(emission.getCache());
        shape.block_size = emission.getBlockSize();
        if (kindJson.find("activation") == kindJson.end()) {
          kindJson["activation"] = emission.getActivation().str();
          kindJson["cache"] = emission.getCache().str();
          kindJson["block_size"] = emission.getBlockSize();
          kindJson["features"] = featuresOf(kind, emission.getCache().str());
        }
        k["form"] = "cuda_core";
        k["schedule"] = {{"vector_width", s.getVectorWidth()},
                         {"threads_per_head", s.getThreadsPerHead()},
                         {"threads_per_block", s.getThreadsPerBlock()},
                         {"heads_per_block", s.getHeadsPerBlock()},
                         {"tokens_per_block", s.getTokensPerBlock()},
                         {"min_blocks_per_sm", s.getMinBlocksPerSm()},
                         {"pair_layout", s.getPairLayout()},
                         {"prefetch", s.getPrefetch()}};
        Result<plan::PreprocessTraffic> traffic = plan::preprocessTraffic(shape);
        if (!traffic)
          return traffic.status();
        k["per_token"] = {{"read_bytes", traffic->read_bytes},
                          {"written_bytes", traffic->written_bytes}};
        Result<plan::KernelWork> w =
            plan::preprocessWork(shape, workload, options.machine);
        if (!w)
          return w.status();
        work = *w;
      } else {
        attn::PagedAttentionOp op;
        function.walk([&](attn::PagedAttentionOp found) { op = found; });
        auto emission = op ? op->getAttrOfType<attn::AttentionEmissionAttr>(
                                 kEmissionAttr)
                           : attn::AttentionEmissionAttr();
        if (!op || !op.getSchedule() || !emission)
          return Status(StatusCode::Internal, kernel.name,
                        "the attention op has no schedule or emission");
        attn::AttentionScheduleAttr s = *op.getSchedule();
        // The scale the kernel applies (the config's default made explicit).
        kindJson["softmax_scale"] = op.getSoftmaxScaleAttr().getValueAsDouble();
        shape.activation_bytes = elementBytes(emission.getActivation());
        shape.cache_bytes = elementBytes(emission.getCache());
        shape.block_size = emission.getBlockSize();
        bool cudaCore = s.getForm() == attn::AttentionForm::cuda_core;
        k["form"] = cudaCore ? "cuda_core" : "tensor_core";
        k["schedule"] = {{"block_m", s.getBlockM()},
                         {"block_n", s.getBlockN()},
                         {"num_warps", s.getNumWarps()},
                         {"pipeline_stages", s.getPipelineStages()},
                         {"qk_dim_padded", s.getQkDimPadded()},
                         {"v_dim_padded", s.getVDimPadded()},
                         {"gqa_pack", s.getGqaPack()},
                         {"mma", s.getMma().str()},
                         {"max_kv_splits", s.getMaxKvSplits()},
                         {"target_ctas", s.getTargetCtas()}};
        if (!cudaCore) {
          // The tile shape this workload's blocks take: a sequence's rows
          // are its query tokens times the packed heads.
          int64_t tokensPerSequence =
              workload.phase == plan::Phase::Decode ? 1 : workload.context;
          int64_t rows =
              std::min(s.getBlockM(), tokensPerSequence * s.getGqaPack());
          k["workload_tile"] = {
              {"rows", rows},
              {"mma", rows <= 16 ? "mma.sync" : s.getMma().str()}};
        }
        // Split-KV: the rule of the plan library on the busy blocks of the
        // ABI's grid (the kernels of the CUDA-core form do not split).
        if (abiSplits(kernel.abi))
          splitKv(s.getTargetCtas(), s.getMaxKvSplits());
        else
          k["split_kv"] = nullptr;
        Result<plan::AttentionTraffic> traffic = plan::attentionTraffic(shape);
        if (!traffic)
          return traffic.status();
        k["per_token"] = {
            {"kv_bytes_per_key", traffic->kv_bytes_per_key},
            {"query_read_bytes", traffic->query_read_bytes},
            {"output_written_bytes", traffic->output_written_bytes},
            {"flops_per_query_key", traffic->flops_per_query_key}};
        Result<plan::KernelWork> w =
            plan::attentionWork(shape, workload, options.machine);
        if (!w)
          return w.status();
        work = *w;
        // sm_90a's warp-specialised prefill kernel is the attention
        // kernel's alternative for prefill-heavy batches: listed, but the
        // layer's floor stays the attention kernel's (not counted twice).
        if (kernel.kind == "prefill_attention")
          runs = false;
      }
      if (k.find("grid") == k.end()) {
        auto grid = evaluateGrid(kernel.abi, symbols, false);
        k["grid"] = grid ? json{(*grid)[0], (*grid)[1], (*grid)[2]} : json();
      }
      if (auto r = resources.find(kernel.name); r != resources.end())
        k["resources"] = r->second;
      else
        k["resources"] = nullptr;
      k["work"] = workJson(*work);
      if (runs)
        layerFloorUs += micros(work->floorSeconds());
      kindJson["kernels"].push_back(k);
    }
    kindJson["floor_us_per_layer"] = layerFloorUs;
    kindJson["floor_us_all_layers"] = layerFloorUs * double(kind.layers.size());
    modelFloorUs += layerFloorUs * double(kind.layers.size());
    kinds.push_back(kindJson);
  }

  json document = {
      {"config", options.config_path},
      {"model_type", config.model_type},
      {"arch", options.arch},
      {"tp", options.layer.tp},
      {"rank", options.layer.rank},
      {"workload",
       {{"phase", plan::phaseName(workload.phase)},
        {"batch", workload.batch},
        {"context", workload.context},
        {"query_tokens", workload.queryTokens()}}},
      {"machine",
       {{"bandwidth_tb_per_s", options.machine.bytes_per_second / 1e12},
        {"matmul_tflop_per_s", options.machine.flops_per_second / 1e12},
        {"defaults", options.default_machine}}},
      {"compiled", options.compile},
      {"layer_kinds", kinds},
      {"floor_us", modelFloorUs}};
  return document;
}

namespace {

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

/// 1234567 -> "1.23 MB" (decimal units, as bandwidths are quoted).
std::string quantity(double value, const char *unit) {
  const char *prefixes[] = {"", "K", "M", "G", "T", "P"};
  int p = 0;
  while (std::fabs(value) >= 1000 && p < 5) {
    value /= 1000;
    ++p;
  }
  return p == 0 ? format("%.0f %s", value, unit)
                : format("%.2f %s%s", value, prefixes[p], unit);
}

std::string joinInts(const json &list) {
  std::string text;
  for (const json &v : list)
    text += (text.empty() ? "" : ",") + std::to_string(v.get<int64_t>());
  return text;
}

/// One feature in words, for the present line.
std::string describeFeature(const std::string &name, const json &f) {
  if (name == "qk_norm")
    return format("q/k norm %s over %s%s, eps %g%s",
                  f["style"].get<std::string>().c_str(),
                  f["scope"].get<std::string>().c_str(),
                  f["bias"].get<bool>() ? " with bias" : "",
                  f["eps"].get<double>(),
                  f["after_rope"].get<bool>() ? ", after rope" : "");
  if (name == "rope") {
    int64_t offset = f["rotary_offset"], dim = f["rotary_dim"];
    std::string text =
        format("rope %s over dims [%lld, %lld), theta %g",
               f["style"].get<std::string>().c_str(), (long long)offset,
               (long long)(offset + dim), f["theta"].get<double>());
    if (f["scaling"] != "none")
      text += format(", %s scaling x%g", f["scaling"].get<std::string>().c_str(),
                     f["factor"].get<double>());
    return text;
  }
  if (name == "gate")
    return "output gate (" + f["layout"].get<std::string>() + ")";
  if (name == "attention_chunk")
    return format("chunked attention (%lld-key chunks)",
                  (long long)f["keys"].get<int64_t>());
  if (name == "sliding_window")
    return format("sliding window of %lld keys",
                  (long long)f["keys"].get<int64_t>());
  if (name == "sinks")
    return "attention sinks";
  if (name == "logit_softcap")
    return format("logit soft-cap %g", f["cap"].get<double>());
  if (name == "value_scale")
    return format("value scale %g", f["scale"].get<double>());
  if (name == "query_temperature")
    return "query temperature";
  if (name == "fp8_cache")
    return "fp8 cache (" + f["type"].get<std::string>() + ")";
  return name;
}

/// The absent line's words for a feature.
const char *featureWord(const std::string &name) {
  static const std::map<std::string, const char *> words = {
      {"qk_norm", "q/k norm"},         {"rope", "rope"},
      {"gate", "output gate"},         {"sliding_window", "sliding window"},
      {"attention_chunk", "chunked attention"},
      {"sinks", "attention sinks"},    {"logit_softcap", "logit soft-cap"},
      {"value_scale", "value scale"},  {"query_temperature", "query temperature"},
      {"fp8_cache", "fp8 cache"}};
  auto it = words.find(name);
  return it == words.end() ? name.c_str() : it->second;
}

/// The features in a fixed order (the JSON object's own order is by key).
const char *const kFeatureOrder[] = {"qk_norm",        "rope",          "gate",
                                     "sliding_window", "attention_chunk",
                                     "sinks",          "logit_softcap",
                                     "value_scale",    "query_temperature",
                                     "fp8_cache"};

/// Microseconds: two decimals from 1 us up, else three significant digits.
std::string microsText(double us) {
  return us >= 1 ? format("%.2f us", us) : format("%.3g us", us);
}

std::string floorLine(const json &work) {
  double bytes = work["read_bytes"].get<double>() +
                 work["written_bytes"].get<double>();
  double flops = work["flops"];
  std::string moved = quantity(bytes, "B");
  if (flops > 0)
    moved += ", " + quantity(flops, "FLOP");
  std::string bound = work["bound"];
  return moved + " -> " + microsText(work["floor_us"]) + " (" + bound +
         "-bound; memory " + microsText(work["memory_us"]) + ", compute " +
         microsText(work["compute_us"]) + ")";
}

} // namespace

std::string explainTable(const json &d) {
  std::string out;
  const json &w = d["workload"], &m = d["machine"];
  out += format("model %s (%s), arch %s, tp %lld rank %lld\n",
                d["model_type"].get<std::string>().c_str(),
                d["config"].get<std::string>().c_str(),
                d["arch"].get<std::string>().c_str(),
                (long long)d["tp"].get<int64_t>(),
                (long long)d["rank"].get<int64_t>());
  bool decode = w["phase"] == "decode";
  out += format("workload: %s of %lld sequence(s) x %lld %s (%lld query "
                "tokens)\n",
                decode ? "decode step" : "causal prefill",
                (long long)w["batch"].get<int64_t>(),
                (long long)w["context"].get<int64_t>(),
                decode ? "keys" : "new tokens",
                (long long)w["query_tokens"].get<int64_t>());
  std::string arch = d["arch"];
  std::string machineNote;
  if (m["defaults"].get<bool>())
    machineNote = arch.rfind("sm_90", 0) == 0
                      ? " (H200, measured; --bandwidth and --flops for "
                        "another GPU)"
                      : " (an H200's, measured; the plan is for " + arch +
                            ": give that GPU's --bandwidth and --flops)";
  out += format("machine: %g TB/s copy bandwidth, %g TFLOP/s matmul%s\n",
                m["bandwidth_tb_per_s"].get<double>(),
                m["matmul_tflop_per_s"].get<double>(), machineNote.c_str());
  if (!d["compiled"].get<bool>())
    out += "registers: not read (--no-compile: NVRTC did not run)\n";

  for (const json &kind : d["layer_kinds"]) {
    const json &h = kind["heads"];
    out += format("\nlayer kind %s: %zu layers [%s]\n",
                  kind["name"].get<std::string>().c_str(),
                  kind["layers"].size(), joinInts(kind["layers"]).c_str());
    out += format("  heads %lld q / %lld kv (group %lld), qk_head_dim %lld, "
                  "v_head_dim %lld; %s activations, %s cache, pages of %lld "
                  "tokens; softmax scale %g\n",
                  (long long)h["num_q_heads"].get<int64_t>(),
                  (long long)h["num_kv_heads"].get<int64_t>(),
                  (long long)h["group_size"].get<int64_t>(),
                  (long long)h["qk_head_dim"].get<int64_t>(),
                  (long long)h["v_head_dim"].get<int64_t>(),
                  kind["activation"].get<std::string>().c_str(),
                  kind["cache"].get<std::string>().c_str(),
                  (long long)kind["block_size"].get<int64_t>(),
                  kind["softmax_scale"].get<double>());
    std::string present, absent;
    for (const char *name : kFeatureOrder) {
      const json &f = kind["features"][name];
      std::string &line = f["present"].get<bool>() ? present : absent;
      line += (line.empty() ? "" : "; ") +
              (f["present"].get<bool>() ? describeFeature(name, f)
                                        : std::string(featureWord(name)));
    }
    out += "  present: " + (present.empty() ? "-" : present) + "\n";
    out += "  absent:  " + (absent.empty() ? "-" : absent) + "\n";

    for (const json &k : kind["kernels"]) {
      const json &s = k["schedule"];
      out += format("  %s (%s, %s)\n", k["name"].get<std::string>().c_str(),
                    k["kind"].get<std::string>().c_str(),
                    k["form"].get<std::string>().c_str());
      bool mla = k.contains("in_this_phase");
      if (k["kind"] == "mla_preprocess") {
        out += format("    plan       %lld threads per block: %lld token(s) "
                      "per block, a latent warp and %lld query warp(s) per "
                      "token, vector %lld, >= %lld blocks per SM\n",
                      (long long)s["threads_per_block"].get<int64_t>(),
                      (long long)s["tokens_per_block"].get<int64_t>(),
                      (long long)s["warps_per_token"].get<int64_t>(),
                      (long long)s["vector_width"].get<int64_t>(),
                      (long long)s["min_blocks_per_sm"].get<int64_t>());
      } else if (k["kind"] == "latent_attention") {
        out += format("    plan       block_m %lld (heads x query rows) x "
                      "block_n %lld latent rows, %lld warps, mma wgmma; V = "
                      "the rows' first kv_lora_rank values\n",
                      (long long)s["block_m"].get<int64_t>(),
                      (long long)s["block_n"].get<int64_t>(),
                      (long long)s["num_warps"].get<int64_t>());
      } else if (k["kind"] == "latent_gather") {
        out += "    plan       one warp per gathered row\n";
      } else if (k["kind"] == "preprocess") {
        out += format("    plan       %lld threads per block: %lld heads x "
                      "%lld threads, vector %lld, %lld token(s) per block, "
                      ">= %lld blocks per SM%s\n",
                      (long long)s["threads_per_block"].get<int64_t>(),
                      (long long)s["heads_per_block"].get<int64_t>(),
                      (long long)s["threads_per_head"].get<int64_t>(),
                      (long long)s["vector_width"].get<int64_t>(),
                      (long long)s["tokens_per_block"].get<int64_t>(),
                      (long long)s["min_blocks_per_sm"].get<int64_t>(),
                      s["pair_layout"].get<bool>() ? ", rope pair layout" : "");
      } else if (k["form"] == "cuda_core") {
        // The CUDA-core form keeps no K/V tiles: its schedule's block_n 16
        // at 1 stage only marks the form.
        out += format("    plan       one block per query token and KV head: "
                      "%lld warps share the keys of its %lld query heads "
                      "(dims %lld/%lld, no K/V tiles)\n",
                      (long long)s["num_warps"].get<int64_t>(),
                      (long long)h["group_size"].get<int64_t>(),
                      (long long)h["qk_head_dim"].get<int64_t>(),
                      (long long)h["v_head_dim"].get<int64_t>());
      } else if (k["kind"] == "varlen_attention") {
        out += format("    plan       block_m %lld x block_n %lld, %lld warps, "
                      "dims padded %lld/%lld, mma %s; contiguous K/V\n",
                      (long long)s["block_m"].get<int64_t>(),
                      (long long)s["block_n"].get<int64_t>(),
                      (long long)s["num_warps"].get<int64_t>(),
                      (long long)s["qk_dim_padded"].get<int64_t>(),
                      (long long)s["v_dim_padded"].get<int64_t>(),
                      s["mma"].get<std::string>().c_str());
      } else {
        out += format("    plan       block_m %lld x block_n %lld, %lld warps, "
                      "%lld stage(s), gqa_pack %lld, dims padded %lld/%lld, "
                      "mma %s\n",
                      (long long)s["block_m"].get<int64_t>(),
                      (long long)s["block_n"].get<int64_t>(),
                      (long long)s["num_warps"].get<int64_t>(),
                      (long long)s["pipeline_stages"].get<int64_t>(),
                      (long long)s["gqa_pack"].get<int64_t>(),
                      (long long)s["qk_dim_padded"].get<int64_t>(),
                      (long long)s["v_dim_padded"].get<int64_t>(),
                      s["mma"].get<std::string>().c_str());
        if (k.contains("workload_tile"))
          out += format("               this workload: tiles of %lld rows "
                        "(%s)\n",
                        (long long)k["workload_tile"]["rows"].get<int64_t>(),
                        k["workload_tile"]["mma"].get<std::string>().c_str());
      }
      if (k["kind"] == "attention" ||
          (k.contains("split_kv") && !k["split_kv"].is_null())) {
        if (k["split_kv"].is_null())
          out += "    split-KV   none (this form does not split)\n";
        else
          out += format("    split-KV   %lld split(s) for %lld busy CTAs (%s)\n",
                        (long long)k["split_kv"]["num_kv_splits"].get<int64_t>(),
                        (long long)k["split_kv"]["busy_ctas"].get<int64_t>(),
                        k["split_kv"]["rule"].get<std::string>().c_str());
      }
      std::string grid = "?";
      if (!k["grid"].is_null())
        grid = format("%lld x %lld x %lld",
                      (long long)k["grid"][0].get<int64_t>(),
                      (long long)k["grid"][1].get<int64_t>(),
                      (long long)k["grid"][2].get<int64_t>());
      out += format("    launch     grid %s, block %lld, dynamic shared "
                    "memory %lld B\n",
                    grid.c_str(), (long long)k["block"][0].get<int64_t>(),
                    (long long)k["dynamic_shared_memory_bytes"].get<int64_t>());
      if (k["resources"].is_null()) {
        out += "    resources  not read (--no-compile)\n";
      } else {
        const json &r = k["resources"];
        out += format("    resources  %lld registers, %lld B stack frame "
                      "(cubin %s, NVRTC %s)\n",
                      (long long)r["registers"].get<int64_t>(),
                      (long long)r["stack_frame_bytes"].get<int64_t>(),
                      r["build"].get<std::string>().c_str(),
                      r["nvrtc_version"].get<std::string>().c_str());
      }
      if (mla) {
        out += format("    phase      %s\n",
                      k["in_this_phase"].get<bool>()
                          ? "runs in this workload (counted in the floor)"
                          : (k["kind"] == "latent_gather"
                                 ? "chunked prefill only (not counted; the "
                                   "floor is for gathering the whole context)"
                                 : "the other phase (not counted)"));
        out += "    floor      " + floorLine(k["work"]) + "\n";
        continue;
      }
      const json &t = k["per_token"];
      if (k["kind"] == "preprocess")
        out += format("    per token  %lld B read, %lld B written\n",
                      (long long)t["read_bytes"].get<int64_t>(),
                      (long long)t["written_bytes"].get<int64_t>());
      else
        out += format("    per token  %lld B of K/V per key; %lld B read and "
                      "%lld B written per query token; %lld FLOPs per (query, "
                      "key)\n",
                      (long long)t["kv_bytes_per_key"].get<int64_t>(),
                      (long long)t["query_read_bytes"].get<int64_t>(),
                      (long long)t["output_written_bytes"].get<int64_t>(),
                      (long long)t["flops_per_query_key"].get<int64_t>());
      out += "    floor      " + floorLine(k["work"]) + "\n";
    }
    out += "  floor per layer " + microsText(kind["floor_us_per_layer"]) +
           "; " + std::to_string(kind["layers"].size()) + " layers " +
           microsText(kind["floor_us_all_layers"]) + "\n";
  }
  out += "\nmodel floor: " + microsText(d["floor_us"]) + " per " +
         (decode ? "decode step" : "prefill") +
         " (the kernels' floors summed over every layer; no launch gaps)\n";
  return out;
}

} // namespace attnc::tools
