#pragma once
// Loss and metric curves as PNG, drawn with OpenCV from the metrics.jsonl records.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attnzoo {

struct Series {
  std::string name;
  std::vector<double> x, y;
  unsigned char r, g, b;
};

// Draws a line chart with axes, ticks, a legend and a title; writes `path` (PNG).
void draw_line_chart(const std::string& path, const std::string& title, const std::string& x_label,
                     const std::vector<Series>& series);

// plots/loss.png and one plots/METRIC.png per metric (train and val curves). Returns the paths written.
std::vector<std::string> write_training_plots(const std::vector<nlohmann::json>& records, const std::string& dir);

}  // namespace attnzoo
