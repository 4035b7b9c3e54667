#include "trainers/experiment.h"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <optional>

namespace attnzoo {

namespace {

// The data shape a `data:` section declares without reading any data, when it is knowable.
std::optional<DataShape> declared_data_shape(const std::shared_ptr<Config>& config) {
  namespace fs = std::filesystem;
  ConfigSection data(config, "data");
  if (!data.has("name") || !data.has("root")) return std::nullopt;
  auto name = data.get_string("name", "");
  auto image_size = data.has("image_size") ? data.get_int("image_size", 0) : 0;
  if (name == "fashion_mnist" || name == "mnist") {
    int64_t size = image_size > 0 ? image_size : 28;
    return DataShape{{1, size, size}, 10};
  }
  if (name == "image_folder" && image_size > 0) {
    fs::path root(data.get_path("root", ""));
    if (fs::is_directory(root / "train")) root /= "train";
    std::error_code error;
    int64_t classes = 0;
    for (const auto& entry : fs::directory_iterator(root, error))
      if (entry.is_directory()) ++classes;
    if (error || classes == 0) return std::nullopt;  // the data loader gives the precise error
    return DataShape{{3, image_size, image_size}, classes};
  }
  return std::nullopt;
}

// Builds the model once against the declared shape so a mistake in `model:` is reported before a
// possibly long data load, not after it.
void check_model_before_loading_data(const std::shared_ptr<Config>& config, const ModelPreset& preset) {
  auto shape = declared_data_shape(config);
  if (!shape) return;
  ConfigSection model(config, "model");
  model.get_string("name", "");
  ModelSummary ignored;
  preset.build(model, *shape, &ignored);
}

}  // namespace

Experiment load_experiment(const std::string& config_path, const std::vector<std::string>& overrides) {
  Experiment e;
  e.config = Config::load(config_path, overrides);
  ConfigSection root(e.config, "");
  e.name = root.require_string("name");
  if (e.name.empty() || e.name.find('/') != std::string::npos)
    root.fail("name", "must be a non-empty name without '/', e.g. vit_fashion");
  e.seed = static_cast<uint64_t>(root.get_int("seed", 0, 0));
  // Default run folder: runs/NAME beside the configs/ folder the file sits in (or beside the file).
  namespace fs = std::filesystem;
  auto default_out = (fs::path(e.config->base_dir()).filename() == "configs" ? fs::path("..") : fs::path(".")) /
                     "runs" / e.name;
  e.run_dir = root.get_path("out", default_out.string());

  // The cheap sections first, so their mistakes surface before any data is read.
  e.trainer = read_trainer_options(root.section("trainer"));
  e.optim = read_optimizer_options(root.section("optim"));
  e.schedule = read_schedule_options(root.section("schedule"));
  auto model_section = root.section("model");
  const auto& preset = find_model_preset(model_section);
  e.model_name = preset.name;
  auto data_section = root.section("data");
  root.finish();
  check_model_before_loading_data(e.config, preset);

  e.data = build_datasets(data_section, e.seed);
  DataShape shape;
  shape.input_shape = e.data.train->input_shape();
  shape.num_classes = static_cast<int64_t>(e.data.train->class_names().size());
  // Same seed, same initial weights.
  torch::manual_seed(e.seed);
  e.model = preset.build(model_section, shape, &e.model_summary);

  auto names = e.model->metric_names();
  names.push_back("loss");
  if (std::find(names.begin(), names.end(), e.trainer.monitor) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    e.config->fail("trainer.monitor", "'" + e.trainer.monitor + "' is not a metric of this model (" + list + ")");
  }
  return e;
}

}  // namespace attnzoo
