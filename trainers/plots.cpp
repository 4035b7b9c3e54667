#include "trainers/plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <set>

namespace attnzoo {

namespace {

// Tick positions at 1, 2 or 5 times a power of ten, about `count` of them.
std::vector<double> nice_ticks(double lo, double hi, int count) {
  if (!(hi > lo)) hi = lo + 1;
  double raw = (hi - lo) / count;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * magnitude) {
      step = m * magnitude;
      break;
    }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(t);
  return ticks;
}

std::string tick_text(double v) {
  if (v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-3)) return fmt::format("{:.0e}", v);
  return fmt::format("{:g}", std::round(v * 1e4) / 1e4);
}

}  // namespace

void draw_line_chart(const std::string& path, const std::string& title, const std::string& x_label,
                     const std::vector<Series>& series) {
  const int width = 800, height = 500, left = 80, right = 20, top = 50, bottom = 60;
  cv::Mat image(height, width, CV_8UC3, cv::Scalar(255, 255, 255));
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const auto& s : series)
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.y[i])) continue;
      x_lo = std::min(x_lo, s.x[i]);
      x_hi = std::max(x_hi, s.x[i]);
      y_lo = std::min(y_lo, s.y[i]);
      y_hi = std::max(y_hi, s.y[i]);
    }
  if (!std::isfinite(x_lo)) x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  if (x_hi <= x_lo) x_hi = x_lo + 1;
  double pad = (y_hi - y_lo) * 0.05;
  if (pad == 0) pad = std::max(1e-3, std::fabs(y_hi) * 0.05);
  y_lo -= pad;
  y_hi += pad;
  const int plot_w = width - left - right, plot_h = height - top - bottom;
  auto px = [&](double x) { return left + static_cast<int>((x - x_lo) / (x_hi - x_lo) * plot_w); };
  auto py = [&](double y) { return top + plot_h - static_cast<int>((y - y_lo) / (y_hi - y_lo) * plot_h); };
  const auto grey = cv::Scalar(220, 220, 220), black = cv::Scalar(0, 0, 0);
  const int font = cv::FONT_HERSHEY_SIMPLEX;
  for (double t : nice_ticks(y_lo, y_hi, 6)) {
    cv::line(image, {left, py(t)}, {left + plot_w, py(t)}, grey, 1);
    auto text = tick_text(t);
    int baseline = 0;
    auto size = cv::getTextSize(text, font, 0.45, 1, &baseline);
    cv::putText(image, text, {left - 8 - size.width, py(t) + size.height / 2}, font, 0.45, black, 1, cv::LINE_AA);
  }
  for (double t : nice_ticks(x_lo, x_hi, 8)) {
    cv::line(image, {px(t), top}, {px(t), top + plot_h}, grey, 1);
    auto text = tick_text(t);
    int baseline = 0;
    auto size = cv::getTextSize(text, font, 0.45, 1, &baseline);
    cv::putText(image, text, {px(t) - size.width / 2, top + plot_h + 20}, font, 0.45, black, 1, cv::LINE_AA);
  }
  cv::rectangle(image, {left, top}, {left + plot_w, top + plot_h}, black, 1);
  cv::putText(image, title, {left, 32}, font, 0.7, black, 2, cv::LINE_AA);
  int baseline = 0;
  auto label_size = cv::getTextSize(x_label, font, 0.5, 1, &baseline);
  cv::putText(image, x_label, {left + plot_w / 2 - label_size.width / 2, height - 15}, font, 0.5, black, 1,
              cv::LINE_AA);
  int legend_y = top + 20;
  for (const auto& s : series) {
    cv::Scalar color(s.b, s.g, s.r);
    std::vector<cv::Point> points;
    for (size_t i = 0; i < s.x.size(); ++i)
      if (std::isfinite(s.y[i])) points.emplace_back(px(s.x[i]), py(s.y[i]));
    if (points.size() > 1) cv::polylines(image, points, false, color, 2, cv::LINE_AA);
    for (const auto& p : points)
      if (points.size() < 40) cv::circle(image, p, 3, color, cv::FILLED, cv::LINE_AA);
  }
  // Legend last, on top of the curves.
  const cv::Rect legend_box(left + plot_w - 158, top + 6, 152, 6 + 22 * static_cast<int>(series.size()));
  cv::rectangle(image, legend_box, cv::Scalar(255, 255, 255), cv::FILLED);
  cv::rectangle(image, legend_box, grey, 1);
  for (const auto& s : series) {
    cv::Scalar color(s.b, s.g, s.r);
    cv::line(image, {left + plot_w - 150, legend_y - 5}, {left + plot_w - 120, legend_y - 5}, color, 3);
    cv::putText(image, s.name, {left + plot_w - 112, legend_y}, font, 0.5, black, 1, cv::LINE_AA);
    legend_y += 22;
  }
  cv::imwrite(path, image);
}

std::vector<std::string> write_training_plots(const std::vector<nlohmann::json>& records, const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::set<std::string> metrics = {"loss"};
  for (const auto& r : records)
    if (r.value("type", "") == "eval")
      for (const auto& item : r.items())
        if (item.value().is_number_float()) metrics.insert(item.key());
  std::vector<std::string> written;
  for (const auto& metric : metrics) {
    Series train{"train", {}, {}, 31, 119, 180}, val{"val", {}, {}, 255, 127, 14};
    for (const auto& r : records) {
      if (!r.contains(metric) || !r.contains("step")) continue;
      auto type = r.value("type", "");
      double step = r["step"].get<double>();
      if (type == "train") train.x.push_back(step), train.y.push_back(r[metric].get<double>());
      if (type == "eval" && r.value("split", "") == "val") val.x.push_back(step), val.y.push_back(r[metric].get<double>());
    }
    if (train.x.empty() && val.x.empty()) continue;
    std::vector<Series> series;
    if (!train.x.empty()) series.push_back(train);
    if (!val.x.empty()) series.push_back(val);
    auto path = dir + "/" + metric + ".png";
    draw_line_chart(path, metric, "optimizer step", series);
    written.push_back(path);
  }
  return written;
}

}  // namespace attnzoo
