//===- attn-translate.cpp - attn kernel form to CUDA ----------------------===//
#include "attnc/Codegen/CudaEmitter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  attnc::registerAttnToCudaTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "attnc kernel translation\n"));
}
