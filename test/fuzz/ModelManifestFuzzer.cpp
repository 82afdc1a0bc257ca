//===- ModelManifestFuzzer.cpp - the model bundle's manifest.json ---------===//
//
// attnc::jit::parseModelManifest (the reading part of loadModelBundle) on
// arbitrary text. What it accepts must print back (CompiledModel::
// manifestJson) to a manifest that reads the same, and no kernel name may
// leave the bundle directory.
//
//===----------------------------------------------------------------------===//
#include "FuzzUtil.h"

#include "attnc/Jit/ModelCompiler.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

using namespace attnc;

namespace {

bool sameManifest(const jit::CompiledModel &a, const jit::CompiledModel &b) {
  if (a.arch != b.arch || a.model_type != b.model_type ||
      a.config_spec != b.config_spec || a.kernels.size() != b.kernels.size())
    return false;
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const jit::CompiledKernel &x = a.kernels[i], &y = b.kernels[i];
    if (x.name != y.name || x.kind != y.kind || x.layer != y.layer ||
        x.schedule != y.schedule)
      return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Result<jit::CompiledModel> model =
      jit::parseModelManifest(text, "manifest.json");
  if (!model) {
    fuzz::checkError(model.status());
    return 0;
  }
  for (const jit::CompiledKernel &kernel : model->kernels)
    if (kernel.name.empty() || kernel.name.find('/') != std::string::npos ||
        kernel.name.find("..") != std::string::npos)
      fuzz::fail("a kernel name that is not a plain file name was accepted",
                 kernel.name);
  std::string printed = model->manifestJson();
  Result<jit::CompiledModel> again =
      jit::parseModelManifest(printed, "manifest.json");
  if (!again)
    fuzz::fail("a printed manifest does not read",
               again.status().message() + "\n" + printed);
  if (!sameManifest(*model, *again))
    fuzz::fail("the manifest round trip changes the model", printed);
  return 0;
}
