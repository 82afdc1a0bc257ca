//===- Translation.cpp - the attn-to-cuda translation ---------------------===//
//
// attn-translate --attn-to-cuda: kernel-form IR in, each kernel's CUDA source
// and ABI out, separated by marker lines, for the emitter's lit tests.
//
//===----------------------------------------------------------------------===//
#include "attnc/Codegen/CudaEmitter.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Dialect/Attn/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

namespace attnc {

LogicalResult translateAttnToCuda(ModuleOp module, raw_ostream &os) {
  // Preparation records derived constants; running it here keeps the
  // translation usable on any kernel-form module. A module whose kernel ops
  // all carry their emission attribute is printed as it is (so that lit can
  // hand the printer a prepared module).
  bool prepared = true;
  module.walk([&](Operation *kernelOp) {
    if (isa<attn::FusedPreprocessOp, attn::PagedAttentionOp,
            attn::MlaPreprocessOp, attn::LatentAttentionOp,
            attn::VarlenAttentionOp>(kernelOp) &&
        !kernelOp->hasAttr(kEmissionAttr))
      prepared = false;
  });
  if (!prepared) {
    PassManager pm(module.getContext());
    pm.addPass(createAttnPrepareEmission());
    if (failed(pm.run(module)))
      return failure();
  }
  FailureOr<std::vector<EmittedKernel>> kernels = emitCudaKernels(module);
  if (failed(kernels))
    return failure();
  for (const EmittedKernel &kernel : *kernels) {
    os << "// ===== kernel " << kernel.name << " (" << kernel.kind
       << ") =====\n"
       << kernel.source << "// ===== abi " << kernel.name << " =====\n"
       << runtime::kernelAbiToJson(kernel.abi) << "\n";
  }
  return success();
}

void registerAttnToCudaTranslation() {
  TranslateFromMLIRRegistration registration(
      "attn-to-cuda", "print the CUDA C++ and ABI of each kernel",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError() << "expected a module";
        return translateAttnToCuda(module, os);
      },
      [](DialectRegistry &registry) {
        registry.insert<attn::AttnDialect, func::FuncDialect,
                        arith::ArithDialect>();
      });
}

} // namespace attnc
