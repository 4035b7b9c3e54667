#pragma once
// metrics.jsonl in the run directory: one JSON object per logged step and per evaluation.
// On resume the lines past the checkpoint's step are dropped, so the file tells one consistent story.
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace attnzoo {

class MetricsLog {
 public:
  // Opens `path` for appending; drops records with "step" > keep_up_to_step (when >= 0).
  MetricsLog(std::string path, int64_t keep_up_to_step);
  void write(const nlohmann::json& record);
  const std::vector<nlohmann::json>& records() const { return records_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ofstream out_;
  std::vector<nlohmann::json> records_;
};

}  // namespace attnzoo
