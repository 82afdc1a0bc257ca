//===- SpecFormat.h - The attnc spec form (import) --------------*- C++ -*-===//
//
// Private to the model library; toSpecJson (ModelConfig.h) is the export.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_MODEL_LIB_SPECFORMAT_H
#define ATTNC_MODEL_LIB_SPECFORMAT_H

#include "ConfigReader.h"

namespace attnc::config_import {

/// Reads an attnc spec (a JSON object with "attnc_spec").
Result<ModelConfig> importSpec(const json &document);

} // namespace attnc::config_import

#endif // ATTNC_MODEL_LIB_SPECFORMAT_H
