#pragma once
// Experiment configuration: one YAML file plus `key.path=value` overrides, read strictly.
//
// Code reads a section through ConfigSection getters; each getter checks type and range, records the
// resolved value (defaults included) for runs/NAME/config.yaml, and marks the key as used. finish()
// then reports any key nobody read, with a did-you-mean. Every error is a ConfigError whose message
// reads `config error: FILE:LINE: key.path: what is wrong`, so a user can act on it at once.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnzoo {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The whole experiment file after overrides; owns the YAML tree and the resolved copy.
class Config {
 public:
  // Loads `path` and applies overrides such as "trainer.epochs=3". Throws ConfigError.
  static std::shared_ptr<Config> load(const std::string& path, const std::vector<std::string>& overrides = {});
  // Parses YAML text; `name` stands in for the file name in messages (tests, resolved configs).
  static std::shared_ptr<Config> parse(const std::string& yaml_text, const std::string& name,
                                       const std::vector<std::string>& overrides = {});

  const std::string& file() const { return file_; }
  // Folder of the config file: relative paths in the config resolve against it, never the cwd.
  const std::string& base_dir() const { return base_dir_; }
  // Every value that was read, defaults filled in, paths made absolute, as YAML text.
  std::string resolved_yaml() const;

  // "FILE:LINE" for a key path, or "command line" if an override set it.
  std::string location(const std::string& key_path) const;
  [[noreturn]] void fail(const std::string& key_path, const std::string& what) const;

 private:
  friend class ConfigSection;
  void apply_override(const std::string& assignment);
  YAML::Node root_;
  YAML::Node resolved_;
  std::string file_;
  std::string base_dir_;
  std::map<std::string, std::string> overridden_;  // key path -> the "key=value" text
};

// One mapping inside the config, e.g. `trainer` or `model`.
class ConfigSection {
 public:
  ConfigSection(std::shared_ptr<Config> config, std::string path);

  const std::string& path() const { return path_; }
  std::string key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  bool has(const std::string& key) const;

  int64_t get_int(const std::string& key, int64_t default_value,
                  int64_t min = std::numeric_limits<int64_t>::min(),
                  int64_t max = std::numeric_limits<int64_t>::max());
  int64_t require_int(const std::string& key, int64_t min = std::numeric_limits<int64_t>::min(),
                      int64_t max = std::numeric_limits<int64_t>::max());
  double get_double(const std::string& key, double default_value,
                    double min = -std::numeric_limits<double>::infinity(),
                    double max = std::numeric_limits<double>::infinity());
  bool get_bool(const std::string& key, bool default_value);
  std::string get_string(const std::string& key, const std::string& default_value);
  std::string require_string(const std::string& key);
  // One of `allowed`; the error lists them and suggests the closest.
  std::string get_choice(const std::string& key, const std::string& default_value,
                         const std::vector<std::string>& allowed);
  std::string require_choice(const std::string& key, const std::vector<std::string>& allowed);
  // A path, resolved against the config file's folder and recorded absolute.
  std::string get_path(const std::string& key, const std::string& default_value);
  std::string require_path(const std::string& key);
  std::vector<double> get_double_list(const std::string& key, const std::vector<double>& default_value);
  std::vector<int64_t> get_int_list(const std::string& key, const std::vector<int64_t>& default_value);

  // A nested mapping. An absent one reads as empty, so every key in it takes its default.
  ConfigSection section(const std::string& key);

  // Raises `config error: LOCATION: path.key: what` (for cross-key checks such as
  // num_heads dividing d_model).
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  // Reports the first key of this section that no getter asked for. Call once all keys are read.
  void finish() const;

 private:
  YAML::Node node(const std::string& key) const;
  void mark_used(const std::string& key);
  template <class T>
  T scalar(const std::string& key, const char* type_name) const;
  template <class T>
  std::vector<T> list(const std::string& key, const std::vector<T>& default_value, const char* what,
                      const char* example);
  void record(const std::string& key, const YAML::Node& value);

  std::shared_ptr<Config> config_;
  std::string path_;
  std::shared_ptr<std::set<std::string>> used_;  // shared between copies of the same section
};

}  // namespace attnzoo
