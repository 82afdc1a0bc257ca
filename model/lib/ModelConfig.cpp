//===- ModelConfig.cpp - Import a model's attention description -----------===//
//
// The entry points: a document with "attnc_spec" is the spec form
// (SpecFormat.cpp), anything else a Hugging Face config.json (HfImporter.cpp,
// with the family table in HfFamilies.cpp). Both read through
// ConfigReader.h, so every error names the field and the rule.
//
//===----------------------------------------------------------------------===//

#include "attnc/Model/ModelConfig.h"

#include "ConfigReader.h"
#include "HfImporter.h"
#include "SpecFormat.h"

#include "attnc/Support/FileUtil.h"

#include <exception>

namespace attnc {

const char *normStyleName(NormStyle style) {
  switch (style) {
  case NormStyle::None:
    return "none";
  case NormStyle::Plain:
    return "rms";
  case NormStyle::Gemma:
    return "gemma";
  case NormStyle::Unweighted:
    return "unweighted";
  case NormStyle::LayerNorm:
    return "layernorm";
  }
  return "unknown";
}

const char *normScopeName(NormScope scope) {
  switch (scope) {
  case NormScope::Head:
    return "head";
  case NormScope::HeadWeights:
    return "head_weights";
  case NormScope::Projection:
    return "projection";
  }
  return "unknown";
}

const char *ropeStyleName(RopeStyle style) {
  switch (style) {
  case RopeStyle::None:
    return "none";
  case RopeStyle::Neox:
    return "neox";
  case RopeStyle::Gptj:
    return "gptj";
  }
  return "unknown";
}

const char *ropeScalingKindName(RopeScalingKind kind) {
  switch (kind) {
  case RopeScalingKind::None:
    return "none";
  case RopeScalingKind::Linear:
    return "linear";
  case RopeScalingKind::Llama3:
    return "llama3";
  case RopeScalingKind::Yarn:
    return "yarn";
  case RopeScalingKind::DynamicNtk:
    return "dynamic";
  case RopeScalingKind::LongRope:
    return "longrope";
  }
  return "unknown";
}

namespace {

/// Config files are kilobytes; refuse anything absurd instead of reading it.
constexpr std::size_t kMaxFileBytes = std::size_t(64) << 20;

} // namespace

Result<ModelConfig> importModelConfig(std::string_view json_text) {
#if defined(__cpp_exceptions)
  // Nothing below is meant to throw; this only keeps a library bug or an
  // allocation failure from crossing the API as an exception.
  try {
#endif
    Result<nlohmann::json> document = config_import::parseConfigJson(json_text);
    if (!document)
      return document.status();
    // The spec form announces itself; anything else is a Hugging Face config.
    if (document->contains("attnc_spec"))
      return config_import::importSpec(*document);
    return config_import::importHfConfig(*document);
#if defined(__cpp_exceptions)
  } catch (const std::exception &ex) {
    return Status("<json>", std::string("internal error: ") + ex.what());
  } catch (...) {
    return Status("<json>", "internal error");
  }
#endif
}

Status checkTensorParallel(const ModelConfig &config, int64_t tp) {
  if (tp <= 1)
    return Status();
  for (const LayerKind &kind : config.kinds)
    if (kind.qk_norm != NormStyle::None &&
        kind.qk_norm_scope == NormScope::Projection)
      return Status("tp", "layer kind " + kind.name +
                              ": a q/k norm over the whole projection "
                              "(qk_norm_scope \"projection\") needs every "
                              "head on one rank; it cannot be split across " +
                              std::to_string(tp) + " tensor-parallel ranks");
  return Status();
}

Result<ModelConfig> importModelConfigFile(const std::string &path) {
  const std::string field = path.empty() ? "<path>" : path;
  Result<std::string> text = file_util::readFile(path, kMaxFileBytes);
  // A config that cannot be read is a bad request, like one that breaks a
  // rule: InvalidArgument, whatever the I/O error.
  if (!text)
    return Status(field, text.status().rule);
  if (text->empty())
    return Status(field, "file is empty");
  return importModelConfig(*text);
}

} // namespace attnc
