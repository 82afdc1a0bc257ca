//===- ConfigImportFuzzer.cpp - attnc::importModelConfig ------------------===//
//
// The config importer on arbitrary text: a Hugging Face config.json or an
// attnc spec (a document with "attnc_spec"). Either it fails with a Status
// that names a rule, or the config it returns survives the spec round trip:
// importModelConfig(toSpecJson(c)) succeeds and prints the same spec.
//
//===----------------------------------------------------------------------===//
#include "FuzzUtil.h"

#include "attnc/Model/ModelConfig.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  attnc::Result<attnc::ModelConfig> config = attnc::importModelConfig(text);
  if (!config) {
    attnc::fuzz::checkError(config.status());
    return 0;
  }
  std::string spec = attnc::toSpecJson(*config);
  attnc::Result<attnc::ModelConfig> again = attnc::importModelConfig(spec);
  if (!again)
    attnc::fuzz::fail("the spec of an imported config does not import",
                      again.status().message() + "\n" + spec);
  std::string spec_again = attnc::toSpecJson(*again);
  if (spec_again != spec)
    attnc::fuzz::fail("the spec round trip changes the config",
                      spec + "\n---\n" + spec_again);
  return 0;
}
