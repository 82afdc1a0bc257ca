//===- OutlineKernels.cpp - attn-outline-kernels --------------------------===//
//
// Lowers layer functions to the kernel form: one func.func per kernel, its
// arguments named by role (the kernel ABI), its body the kernel op alone; the
// layer function calls the kernels in order. A paged attention with an
// `attn.prefill_schedule` (attn-specialize, sm_90a) also gets an uncalled
// second kernel, `<layer>__prefill_attention`, the attention kernel's copy
// on that schedule (the launcher's choice for prefill-heavy batches).
//
//===----------------------------------------------------------------------===//
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace attnc {
#define GEN_PASS_DEF_ATTNOUTLINEKERNELS
#include "attnc/Transforms/Passes.h.inc"
} // namespace attnc

using namespace mlir;
using namespace attnc::attn;

namespace {

/// A kernel argument: its role name and the value passed in the layer.
struct KernelArg {
  StringRef name;
  Value value;
};

/// The arguments of a preprocess kernel, in ABI order; absent optional
/// operands are absent arguments.
SmallVector<KernelArg> preprocessArgs(FusedPreprocessOp op) {
  SmallVector<KernelArg> args = {{"qkv", op.getQkv()},
                                 {"slot_mapping", op.getSlotMapping()},
                                 {"k_cache", op.getKCache()},
                                 {"v_cache", op.getVCache()},
                                 {"positions", op.getPositions()},
                                 {"q_norm_weight", op.getQNormWeight()},
                                 {"k_norm_weight", op.getKNormWeight()},
                                 {"q_norm_bias", op.getQNormBias()},
                                 {"k_norm_bias", op.getKNormBias()},
                                 {"k_scale", op.getKScale()},
                                 {"v_scale", op.getVScale()}};
  llvm::erase_if(args, [](const KernelArg &a) { return !a.value; });
  return args;
}

SmallVector<KernelArg> attentionArgs(PagedAttentionOp op, OutputGateOp gate) {
  SmallVector<KernelArg> args = {{"query", op.getQuery()},
                                 {"k_cache", op.getKCache()},
                                 {"v_cache", op.getVCache()},
                                 {"block_tables", op.getBlockTables()},
                                 {"seq_lens", op.getSeqLens()},
                                 {"query_start_loc", op.getQueryStartLoc()},
                                 {"sinks", op.getSinks()},
                                 {"k_scale", op.getKScale()},
                                 {"v_scale", op.getVScale()},
                                 {"gate", gate ? gate.getGate() : Value()}};
  llvm::erase_if(args, [](const KernelArg &a) { return !a.value; });
  return args;
}

/// The arguments of MLA's kernels (each op is one kernel as it stands), in
/// ABI order; an absent cache scale is an absent argument.
SmallVector<KernelArg> mlaPreprocessArgs(MlaPreprocessOp op) {
  SmallVector<KernelArg> args = {{"kv_a", op.getKvA()},
                                 {"q_rope", op.getQRope()},
                                 {"slot_mapping", op.getSlotMapping()},
                                 {"positions", op.getPositions()},
                                 {"kv_norm_weight", op.getKvNormWeight()},
                                 {"latent_cache", op.getLatentCache()},
                                 {"cache_scale", op.getCacheScale()}};
  llvm::erase_if(args, [](const KernelArg &a) { return !a.value; });
  return args;
}

SmallVector<KernelArg> latentAttentionArgs(LatentAttentionOp op) {
  SmallVector<KernelArg> args = {{"query", op.getQuery()},
                                 {"latent_cache", op.getLatentCache()},
                                 {"block_tables", op.getBlockTables()},
                                 {"seq_lens", op.getSeqLens()},
                                 {"query_start_loc", op.getQueryStartLoc()},
                                 {"cache_scale", op.getCacheScale()}};
  llvm::erase_if(args, [](const KernelArg &a) { return !a.value; });
  return args;
}

SmallVector<KernelArg> varlenAttentionArgs(VarlenAttentionOp op) {
  return {{"query", op.getQuery()},
          {"key", op.getKey()},
          {"value", op.getValue()},
          {"cu_seqlens_q", op.getCuSeqlensQ()},
          {"cu_seqlens_k", op.getCuSeqlensK()}};
}

SmallVector<KernelArg> latentGatherArgs(LatentGatherOp op) {
  SmallVector<KernelArg> args = {{"latent_cache", op.getLatentCache()},
                                 {"block_tables", op.getBlockTables()},
                                 {"cu_seqlens", op.getCuSeqlens()},
                                 {"cache_scale", op.getCacheScale()}};
  llvm::erase_if(args, [](const KernelArg &a) { return !a.value; });
  return args;
}

/// The output_gate that is the only user of the attention output, if any:
/// it becomes the attention kernel's epilogue.
OutputGateOp epilogueGate(PagedAttentionOp op) {
  Value output = op.getOutput();
  if (!output.hasOneUse())
    return {};
  auto gate = dyn_cast<OutputGateOp>(*output.getUsers().begin());
  if (!gate || gate.getInput() != output)
    return {};
  return gate;
}

struct OutlineKernels
    : attnc::impl::AttnOutlineKernelsBase<OutlineKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> layers;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function->hasAttr("attn.kernel") && !function.isExternal())
        layers.push_back(function);
    for (func::FuncOp layer : layers)
      if (failed(outlineLayer(layer, symbols)))
        return signalPassFailure();
  }

  LogicalResult outlineLayer(func::FuncOp layer, SymbolTable &symbols) {
    // Everything attn in a layer must be a kernel op by now.
    WalkResult walk = layer.walk([&](Operation *op) {
      if (op->getDialect() &&
          op->getDialect()->getNamespace() == AttnDialect::getDialectNamespace() &&
          !isa<FusedPreprocessOp, PagedAttentionOp, OutputGateOp,
               MlaPreprocessOp, LatentAttentionOp, VarlenAttentionOp,
               LatentGatherOp>(op)) {
        op->emitOpError() << "is not in kernel form: it was not fused into "
                             "attn.fused_preprocess (run attn-fuse-preprocess; "
                             "an intermediate with other users prevents "
                             "fusion)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    SmallVector<Operation *> kernels;
    layer.walk([&](Operation *op) {
      if (isa<FusedPreprocessOp, PagedAttentionOp, MlaPreprocessOp,
              LatentAttentionOp, VarlenAttentionOp, LatentGatherOp>(op))
        kernels.push_back(op);
    });
    for (Operation *op : kernels) {
      if (auto mla = dyn_cast<MlaPreprocessOp>(op)) {
        outline(layer, symbols, op, {}, "mla_preprocess",
                mlaPreprocessArgs(mla),
                {"latent", "q_rope_out", "latent_cache_out"});
      } else if (auto latent = dyn_cast<LatentAttentionOp>(op)) {
        outline(layer, symbols, op, {}, "latent_attention",
                latentAttentionArgs(latent), {"output"});
      } else if (auto varlen = dyn_cast<VarlenAttentionOp>(op)) {
        outline(layer, symbols, op, {}, "varlen_attention",
                varlenAttentionArgs(varlen), {"output"});
      } else if (auto gather = dyn_cast<LatentGatherOp>(op)) {
        outline(layer, symbols, op, {}, "latent_gather",
                latentGatherArgs(gather), {"output"});
      } else if (auto fused = dyn_cast<FusedPreprocessOp>(op)) {
        outline(layer, symbols, op, {}, "preprocess", preprocessArgs(fused),
                {"q", "k_cache_out", "v_cache_out", "gate"});
      } else {
        auto attention = cast<PagedAttentionOp>(op);
        OutputGateOp gate = epilogueGate(attention);
        auto prefill = attention->getAttrOfType<AttentionScheduleAttr>(
            attnc::kPrefillScheduleAttr);
        attention->removeAttr(attnc::kPrefillScheduleAttr);
        func::FuncOp kernel =
            outline(layer, symbols, op, gate, "attention",
                    attentionArgs(attention, gate), {"output"});
        if (prefill)
          addPrefillKernel(layer, symbols, kernel, prefill);
      }
    }
    // An output_gate not folded into an attention epilogue has no kernel.
    WalkResult stray = layer.walk([&](OutputGateOp gate) {
      gate.emitOpError() << "is not in kernel form: its input is not the sole "
                            "use of an attn.paged_attention output";
      return WalkResult::interrupt();
    });
    return failure(stray.wasInterrupted());
  }

  /// The layer's second attention kernel, `<layer>__prefill_attention`
  /// (kind "prefill_attention"): a copy of its attention kernel `kernel`
  /// whose paged attention takes the warp-specialised `schedule`. The layer
  /// function keeps calling the attention kernel; the launcher picks the
  /// prefill kernel for prefill-heavy batches (the same arguments).
  void addPrefillKernel(func::FuncOp layer, SymbolTable &symbols,
                        func::FuncOp kernel, AttentionScheduleAttr schedule) {
    func::FuncOp prefill = kernel.clone();
    prefill.setSymName((layer.getSymName() + "__prefill_attention").str());
    symbols.insert(prefill, std::next(Block::iterator(kernel)));
    OpBuilder builder(prefill);
    prefill->setAttr("attn.kernel", builder.getStringAttr("prefill_attention"));
    prefill.walk([&](PagedAttentionOp op) { op.setScheduleAttr(schedule); });
  }

  /// Moves `op` (and `epilogue`, when given) into a new kernel function and
  /// calls it from `layer`; returns the kernel function.
  func::FuncOp outline(func::FuncOp layer, SymbolTable &symbols, Operation *op,
               OutputGateOp epilogue, StringRef kind,
               ArrayRef<KernelArg> args, ArrayRef<StringRef> resultNames) {
    OpBuilder builder(layer);
    Location loc = op->getLoc();
    SmallVector<Type> argTypes;
    for (const KernelArg &arg : args)
      argTypes.push_back(arg.value.getType());
    Operation *last = epilogue ? epilogue.getOperation() : op;
    TypeRange resultTypes = last->getResultTypes();

    std::string name = (layer.getSymName() + "__" + kind).str();
    auto kernel = func::FuncOp::create(
        builder, loc, name,
        builder.getFunctionType(argTypes, resultTypes));
    symbols.insert(kernel); // renames on a clash (two kernels of a kind)
    kernel->setAttr("attn.kernel", builder.getStringAttr(kind));
    kernel->setAttr("attn.layer", builder.getStringAttr(layer.getSymName()));
    for (auto [i, arg] : llvm::enumerate(args))
      kernel.setArgAttr(i, "attn.arg", builder.getStringAttr(arg.name));
    // Results are named by role too; a dropped optional result (the gate)
    // simply has no entry.
    for (unsigned i = 0; i < resultTypes.size(); ++i)
      kernel.setResultAttr(i, "attn.result",
                           builder.getStringAttr(resultNames[i]));

    Block *body = kernel.addEntryBlock();
    OpBuilder inner = OpBuilder::atBlockBegin(body);
    IRMapping mapping;
    for (auto [i, arg] : llvm::enumerate(args))
      mapping.map(arg.value, body->getArgument(i));
    Operation *cloned = inner.clone(*op, mapping);
    if (epilogue)
      cloned = inner.clone(*epilogue, mapping);
    func::ReturnOp::create(inner, loc, cloned->getResults());

    OpBuilder call(last);
    SmallVector<Value> operands;
    for (const KernelArg &arg : args)
      operands.push_back(arg.value);
    auto callOp = func::CallOp::create(call, loc, kernel, operands);
    last->replaceAllUsesWith(callOp.getResults());
    if (epilogue)
      epilogue.erase();
    op->erase();
    return kernel;
  }
};

} // namespace
