//===- attn-translate.cpp - attn kernel form to CUDA ----------------------===//
//
// Exit status as the attnc CLI's: 0 ok, 2 bad input (IR that does not parse,
// verify or emit; IR nested deeper than the parser can take).
//
//===----------------------------------------------------------------------===//
#include "attnc/Codegen/CudaEmitter.h"
#include "attnc/Support/TextNesting.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <string>

namespace {

constexpr int kExitBadInput = 2;

/// The input file among mlir-translate's arguments: the one positional
/// argument ("-" or none is stdin, which is not checked here). Options take
/// their values as -opt=value, except -o.
std::string inputFileOf(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-o") == 0) {
      ++i;
      continue;
    }
    if (argv[i][0] != '-')
      return argv[i];
  }
  return "";
}

} // namespace

int main(int argc, char **argv) {
  attnc::registerAttnToCudaTranslation();
  // The parser recurses per nesting level without a limit of its own.
  if (std::string path = inputFileOf(argc, argv); !path.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (buffer) {
      std::string nesting =
          attnc::irNestingError(path, (*buffer)->getBuffer());
      if (!nesting.empty()) {
        llvm::errs() << "attn-translate: error: " << nesting << "\n";
        return kExitBadInput;
      }
    }
  }
  return mlir::failed(
             mlir::mlirTranslateMain(argc, argv, "attnc kernel translation\n"))
             ? kExitBadInput
             : 0;
}
