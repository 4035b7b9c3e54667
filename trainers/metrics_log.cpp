#include "trainers/metrics_log.h"

#include <filesystem>

#include "trainers/checkpoint.h"

namespace attnzoo {

MetricsLog::MetricsLog(std::string path, int64_t keep_up_to_step) : path_(std::move(path)) {
  std::ifstream in(path_);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded()) continue;  // a line cut short by a crash
    if (keep_up_to_step >= 0 && record.value("step", int64_t{0}) > keep_up_to_step) continue;
    if (keep_up_to_step < 0) continue;  // fresh run: start empty
    records_.push_back(record);
    kept += record.dump() + "\n";
  }
  in.close();
  write_file_atomically(path_, kept);
  out_.open(path_, std::ios::app);
}

void MetricsLog::write(const nlohmann::json& record) {
  records_.push_back(record);
  out_ << record.dump() << "\n";
  out_.flush();
}

}  // namespace attnzoo
