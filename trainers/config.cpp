#include "trainers/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "trainers/text_distance.h"

namespace attnzoo {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream stream(path);
  std::string part;
  while (std::getline(stream, part, '.')) parts.push_back(part);
  return parts;
}

// yaml-cpp's `a = b` assigns contents; walking a tree must rebind with reset() instead.
YAML::Node child_or_null(const YAML::Node& parent, const std::string& key) {
  if (!parent.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (const auto& item : parent)
    if (item.first.as<std::string>() == key) return item.second;
  return YAML::Node(YAML::NodeType::Undefined);
}

// 1-based line of the key that holds `path`, or 0 if there is no such key.
int key_line(const YAML::Node& root, const std::string& path) {
  YAML::Node node;
  node.reset(root);
  int line = 0;
  for (const auto& part : split_path(path)) {
    if (!node.IsMap()) return 0;
    bool found = false;
    for (const auto& item : node) {
      if (item.first.as<std::string>() != part) continue;
      line = item.first.Mark().line + 1;
      node.reset(item.second);
      found = true;
      break;
    }
    if (!found) return 0;
  }
  return line;
}

YAML::Node find(const YAML::Node& root, const std::string& path) {
  YAML::Node node;
  node.reset(root);
  if (path.empty()) return node;
  for (const auto& part : split_path(path)) {
    YAML::Node next = child_or_null(node, part);
    if (!next.IsDefined()) return next;
    node.reset(next);
  }
  return node;
}

// Returns the node at `path`, creating maps on the way.
YAML::Node make_path(YAML::Node root, const std::vector<std::string>& parts) {
  YAML::Node node;
  node.reset(root);
  for (const auto& part : parts) {
    YAML::Node next = node[part];
    node.reset(next);
  }
  return node;
}

// yaml-cpp keeps the first of two equal keys silently; a user who wrote both meant one of them.
void reject_duplicate_keys(const YAML::Node& node, const std::string& file, const std::string& path) {
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& item : node) {
      auto key = item.first.as<std::string>();
      auto key_path = path.empty() ? key : path + "." + key;
      if (!seen.insert(key).second)
        throw ConfigError(fmt::format("config error: {}:{}: {}: key appears twice", file, item.first.Mark().line + 1,
                                      key_path));
      reject_duplicate_keys(item.second, file, key_path);
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) reject_duplicate_keys(item, file, path);
  }
}

std::string scalar_text(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

}  // namespace

std::shared_ptr<Config> Config::load(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path);
  if (!in) {
    throw ConfigError(fmt::format("config error: {}: {}", path,
                                  fs::exists(path) ? "cannot read the file" : "no such file"));
  }
  std::stringstream text;
  text << in.rdbuf();
  auto config = parse(text.str(), path, overrides);
  config->base_dir_ = fs::absolute(fs::path(path)).parent_path().lexically_normal().string();
  return config;
}

std::shared_ptr<Config> Config::parse(const std::string& yaml_text, const std::string& name,
                                      const std::vector<std::string>& overrides) {
  auto config = std::shared_ptr<Config>(new Config());
  config->file_ = name;
  config->base_dir_ = fs::current_path().string();
  try {
    config->root_ = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("config error: {}:{}: invalid YAML: {}", name, e.mark.line + 1, e.msg));
  }
  if (config->root_.IsNull()) config->root_ = YAML::Node(YAML::NodeType::Map);
  if (!config->root_.IsMap())
    throw ConfigError(fmt::format("config error: {}:1: the file must be a mapping of sections (model:, data:, ...)",
                                  name));
  reject_duplicate_keys(config->root_, name, "");
  config->resolved_ = YAML::Node(YAML::NodeType::Map);
  for (const auto& assignment : overrides) config->apply_override(assignment);
  return config;
}

void Config::apply_override(const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError(fmt::format("config error: command line: '{}': overrides look like key.path=value", assignment));
  std::string key_path = assignment.substr(0, eq);
  std::string value_text = assignment.substr(eq + 1);
  YAML::Node value;
  try {
    value = YAML::Load(value_text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("config error: command line: {}: value '{}' is not valid YAML: {}", key_path,
                                  value_text, e.msg));
  }
  auto parts = split_path(key_path);
  for (const auto& part : parts)
    if (part.empty()) throw ConfigError(fmt::format("config error: command line: '{}': empty key name", key_path));
  YAML::Node node;
  node.reset(root_);
  std::string walked;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    walked = walked.empty() ? parts[i] : walked + "." + parts[i];
    YAML::Node next = child_or_null(node, parts[i]);
    if (next.IsDefined() && !next.IsNull() && !next.IsMap())
      throw ConfigError(fmt::format("config error: command line: {}: {} is a value, not a section", key_path, walked));
    if (!next.IsDefined() || next.IsNull()) {
      node[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next = node[parts[i]];
    }
    node.reset(next);
  }
  node[parts.back()] = value;
  overridden_[key_path] = assignment;
}

std::string Config::location(const std::string& key_path) const {
  // The most specific override that covers this key wins.
  for (std::string prefix = key_path;;) {
    auto it = overridden_.find(prefix);
    if (it != overridden_.end()) return fmt::format("command line '{}'", it->second);
    auto dot = prefix.rfind('.');
    if (dot == std::string::npos) break;
    prefix.resize(dot);
  }
  // Otherwise the line of the key, or of the closest enclosing section that exists.
  for (std::string prefix = key_path;;) {
    int line = prefix.empty() ? 0 : key_line(root_, prefix);
    if (line > 0) return fmt::format("{}:{}", file_, line);
    auto dot = prefix.rfind('.');
    if (dot == std::string::npos) break;
    prefix.resize(dot);
  }
  return fmt::format("{}:1", file_);
}

void Config::fail(const std::string& key_path, const std::string& what) const {
  throw ConfigError(fmt::format("config error: {}: {}: {}", location(key_path), key_path, what));
}

std::string Config::resolved_yaml() const {
  YAML::Emitter out;
  out << resolved_;
  return std::string(out.c_str()) + "\n";
}

ConfigSection::ConfigSection(std::shared_ptr<Config> config, std::string path)
    : config_(std::move(config)), path_(std::move(path)), used_(std::make_shared<std::set<std::string>>()) {
  auto self = find(config_->root_, path_);
  if (self.IsDefined() && !self.IsNull() && !self.IsMap())
    config_->fail(path_, fmt::format("expected a section (a mapping of keys), got '{}'", scalar_text(self)));
}

YAML::Node ConfigSection::node(const std::string& key) const { return find(config_->root_, key_path(key)); }

bool ConfigSection::has(const std::string& key) const {
  auto n = node(key);
  return n.IsDefined() && !n.IsNull();
}

void ConfigSection::mark_used(const std::string& key) { used_->insert(key); }

void ConfigSection::record(const std::string& key, const YAML::Node& value) {
  auto parts = split_path(path_);
  if (path_.empty()) parts.clear();
  parts.push_back(key);
  auto parent_parts = std::vector<std::string>(parts.begin(), parts.end() - 1);
  YAML::Node parent = make_path(config_->resolved_, parent_parts);
  parent[key] = value;
}

template <class T>
T ConfigSection::scalar(const std::string& key, const char* type_name) const {
  auto n = node(key);
  if (!n.IsScalar()) fail(key, fmt::format("expected {}, got '{}'", type_name, scalar_text(n)));
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    fail(key, fmt::format("expected {}, got '{}'", type_name, n.Scalar()));
  }
}

int64_t ConfigSection::get_int(const std::string& key, int64_t default_value, int64_t min, int64_t max) {
  mark_used(key);
  int64_t value = has(key) ? scalar<int64_t>(key, "an integer") : default_value;
  if (value < min || value > max) {
    if (max == std::numeric_limits<int64_t>::max()) fail(key, fmt::format("must be >= {}, got {}", min, value));
    fail(key, fmt::format("must be in [{}, {}], got {}", min, max, value));
  }
  record(key, YAML::Node(value));
  return value;
}

int64_t ConfigSection::require_int(const std::string& key, int64_t min, int64_t max) {
  if (!has(key)) fail(key, "required key is missing (an integer)");
  return get_int(key, 0, min, max);
}

double ConfigSection::get_double(const std::string& key, double default_value, double min, double max) {
  mark_used(key);
  double value = has(key) ? scalar<double>(key, "a number") : default_value;
  if (std::isnan(value)) fail(key, "must be a number, got nan");
  if (value < min || value > max) {
    if (std::isinf(max)) fail(key, fmt::format("must be >= {}, got {}", min, value));
    if (std::isinf(min)) fail(key, fmt::format("must be <= {}, got {}", max, value));
    fail(key, fmt::format("must be in [{}, {}], got {}", min, max, value));
  }
  record(key, YAML::Node(value));
  return value;
}

bool ConfigSection::get_bool(const std::string& key, bool default_value) {
  mark_used(key);
  bool value = has(key) ? scalar<bool>(key, "true or false") : default_value;
  record(key, YAML::Node(value));
  return value;
}

std::string ConfigSection::get_string(const std::string& key, const std::string& default_value) {
  mark_used(key);
  std::string value = has(key) ? scalar<std::string>(key, "a string") : default_value;
  record(key, YAML::Node(value));
  return value;
}

std::string ConfigSection::require_string(const std::string& key) {
  if (!has(key)) fail(key, "required key is missing");
  return get_string(key, "");
}

std::string ConfigSection::get_choice(const std::string& key, const std::string& default_value,
                                      const std::vector<std::string>& allowed) {
  auto value = get_string(key, default_value);
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    auto guess = closest_match(value, allowed);
    fail(key, fmt::format("'{}' is not one of: {}{}", value, list,
                          guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess)));
  }
  return value;
}

std::string ConfigSection::require_choice(const std::string& key, const std::vector<std::string>& allowed) {
  if (!has(key)) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(key, fmt::format("required key is missing (one of: {})", list));
  }
  return get_choice(key, "", allowed);
}

std::string ConfigSection::get_path(const std::string& key, const std::string& default_value) {
  mark_used(key);
  std::string text = has(key) ? scalar<std::string>(key, "a path") : default_value;
  if (text.empty()) {
    record(key, YAML::Node(text));
    return text;
  }
  // Paths in the file are relative to the file; paths typed on the command line, to the shell's cwd.
  bool from_command_line = has(key) && config_->location(key_path(key)).rfind("command line", 0) == 0;
  fs::path base = from_command_line ? fs::current_path() : fs::path(config_->base_dir());
  fs::path p(text);
  if (p.is_relative()) p = base / p;
  auto resolved = p.lexically_normal().string();
  record(key, YAML::Node(resolved));
  return resolved;
}

std::string ConfigSection::require_path(const std::string& key) {
  if (!has(key)) fail(key, "required key is missing (a path)");
  return get_path(key, "");
}

template <class T>
std::vector<T> ConfigSection::list(const std::string& key, const std::vector<T>& default_value, const char* what,
                                   const char* example) {
  mark_used(key);
  std::vector<T> values = default_value;
  if (has(key)) {
    auto n = node(key);
    if (!n.IsSequence()) fail(key, fmt::format("expected a list of {} such as {}, got '{}'", what, example, scalar_text(n)));
    values.clear();
    for (const auto& item : n) {
      try {
        values.push_back(item.as<T>());
      } catch (const YAML::Exception&) {
        fail(key, fmt::format("expected a list of {}, got '{}'", what, scalar_text(n)));
      }
    }
  }
  YAML::Node out(YAML::NodeType::Sequence);
  for (const T& v : values) out.push_back(v);
  out.SetStyle(YAML::EmitterStyle::Flow);
  record(key, out);
  return values;
}

std::vector<double> ConfigSection::get_double_list(const std::string& key, const std::vector<double>& default_value) {
  return list<double>(key, default_value, "numbers", "[0.5, 0.5]");
}

std::vector<int64_t> ConfigSection::get_int_list(const std::string& key, const std::vector<int64_t>& default_value) {
  return list<int64_t>(key, default_value, "integers", "[1, 2]");
}

ConfigSection ConfigSection::section(const std::string& key) {
  mark_used(key);
  return ConfigSection(config_, key_path(key));
}

void ConfigSection::fail(const std::string& key, const std::string& what) const { config_->fail(key_path(key), what); }

void ConfigSection::finish() const {
  auto self = find(config_->root_, path_);
  if (!self.IsDefined() || !self.IsMap()) return;
  std::vector<std::string> known(used_->begin(), used_->end());
  for (const auto& item : self) {
    auto key = item.first.as<std::string>();
    if (used_->count(key)) continue;
    auto guess = closest_match(key, known);
    std::string where = path_.empty() ? "at the top level" : fmt::format("in {}", path_);
    fail(key, fmt::format("unknown key {}{}", where,
                          guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", key_path(guess))));
  }
}

}  // namespace attnzoo
