//===- HfImporter.h - Hugging Face config.json to ModelConfig ---*- C++ -*-===//
//
// Private to the model library. HfImporter.cpp reads the model type, the
// layers and the heads; HfRope.cpp the rotary embedding. What the config does
// not say comes from the family table (HfFamilies.h).
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_MODEL_LIB_HFIMPORTER_H
#define ATTNC_MODEL_LIB_HFIMPORTER_H

#include "ConfigReader.h"
#include "HfFamilies.h"

#include <optional>
#include <string>
#include <vector>

namespace attnc::config_import {

/// Reads a Hugging Face config (any JSON object without "attnc_spec").
Result<ModelConfig> importHfConfig(const json &document);

/// Head geometry read from the config, plus the MLA split of Dqk.
struct Geometry {
  HeadShape shape;
  HeadFieldNames names;
  bool mla = false;
  int64_t nope_dim = 0; ///< MLA: qk_nope_head_dim
  int64_t rope_dim = 0; ///< MLA: qk_rope_head_dim
};

class HfImporter {
public:
  explicit HfImporter(const json &root) : root_{&root, ""} {}
  Result<ModelConfig> run();

private:
  /// `key` in the text config if there, else at the top level, else (for
  /// messages) the text config.
  const Node &ownerOf(const std::string &key) const {
    if (text_.has(key) || !root_.has(key))
      return text_;
    return root_;
  }
  std::string unknownPrefix() const {
    return "unknown model type '" + printable(family_name_) + "': ";
  }
  /// Whether a family switch is on (Switch's rule).
  bool isOn(const Switch &s);
  /// The value at a dotted path under the text config ("a.b"), or null.
  const json *atPath(const std::string &dotted) const;

  void applyAliases();
  void checkRefusals();
  void readDtype();
  void readFamilyFeatures();
  void readExplicitFeatures();
  std::vector<Slot> assignLayers();
  bool readLayerPatternList(std::vector<Slot> &slots);
  bool readLayerTypes(const json &types, std::vector<Slot> &slots);
  bool readIndexList(std::vector<Slot> &slots);
  std::vector<bool> assignNope();
  int64_t readWindow(const std::vector<Slot> &slots);
  std::optional<LayerKind> buildKind(Slot slot, bool nope,
                                     std::vector<int64_t> layers,
                                     int64_t window);
  Geometry readHeads(const HeadKeys &keys);
  bool readSinks(bool sliding);
  double readScale(const LayerKind &kind, const Geometry &geometry);
  // HfRope.cpp
  RopeConfig readRope(const std::string &kind_name, const Geometry &geometry,
                      bool sliding);
  int64_t readRotaryDim(const Geometry &geometry, const Node &rope_params);
  RopeScaling readScaling(const Node &source, bool from_rope_parameters,
                          int64_t rotary_dim);
  void readLongRope(const Node &source, RopeScaling &scaling,
                    int64_t rotary_dim);

  Reader r_;
  Node root_;
  Node text_;
  /// The text config with the family's key aliases applied (owned here;
  /// text_ points at it when the family has aliases).
  json aliased_;
  /// The family's rules; null for a model type not in the table.
  const FamilyRules *family_ = nullptr;
  std::string family_name_;  ///< model_type that selected the family
  std::string family_field_; ///< where it came from
  NormStyle norm_ = NormStyle::None;
  RopeStyle rope_style_ = RopeStyle::None;
  GateLayout gate_ = GateLayout::None;
  bool explicit_sinks_ = false; ///< unknown families: the "sinks" key
  std::string layout_field_;    ///< the key that decided the layer kinds
  std::vector<bool> nope_;      ///< per layer: no rotary embedding
  ModelConfig config_;
};

} // namespace attnc::config_import

#endif // ATTNC_MODEL_LIB_HFIMPORTER_H
