#pragma once
// The registry of model names and presets: the one list a user reads to see what exists.
// A preset is a name plus a builder; the builder reads the `model:` config section (any key may
// override the preset's value) and the data's shape, and returns the module.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/zoo_model.h"
#include "trainers/config.h"

namespace attnzoo {

// What the data tells the model, so configs need not repeat it.
struct DataShape {
  std::vector<int64_t> input_shape;  // e.g. {1, 28, 28}
  int64_t num_classes = 0;
};

struct ModelSummary {
  int64_t layers = 0;
  int64_t width = 0;
  int64_t heads = 0;
};

struct ModelPreset {
  std::string name;         // what `model.name` says, e.g. "vit_tiny"
  std::string family;       // "vit"
  std::string description;  // one line for `attnzoo zoo`
  DataShape zoo_shape;      // data shape used to count parameters in `attnzoo zoo`
  // Reads the model section and builds. Must call section.finish() itself.
  std::function<std::shared_ptr<ZooModelImpl>(ConfigSection& section, const DataShape& data, ModelSummary* summary)>
      build;
};

// The list itself is written out in zoo.cpp (no static-initialiser registration: a static library
// would drop it, and one readable list is the point).
const std::vector<ModelPreset>& model_presets();
const ModelPreset& find_model_preset(ConfigSection& model_section);  // reads model.name; ConfigError if unknown

std::shared_ptr<ZooModelImpl> build_model(ConfigSection model_section, const DataShape& data);
int64_t count_parameters(const torch::nn::Module& module);

}  // namespace attnzoo
