#include "trainers/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace attnzoo {
namespace {

// Runs `read` on the `model` section of `yaml` and returns the ConfigError message it raised.
template <class Fn>
std::string error_of(const std::string& yaml, Fn read, const std::vector<std::string>& overrides = {}) {
  try {
    auto config = Config::parse(yaml, "exp.yaml", overrides);
    ConfigSection model(config, "model");
    read(model);
    model.finish();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

const char* kModel =
    "name: demo\n"           // line 1
    "model:\n"               // line 2
    "  d_model: 64\n"        // line 3
    "  num_heads: 5\n"       // line 4
    "  dropout: 0.1\n"       // line 5
    "  norm: pre\n";         // line 6

void read_all(ConfigSection& model) {
  auto d = model.get_int("d_model", 32, 1);
  auto h = model.get_int("num_heads", 4, 1);
  model.get_double("dropout", 0.0, 0.0, 1.0);
  model.get_choice("norm", "post", {"pre", "post"});
  if (d % h != 0) model.fail("num_heads", "does not divide model.d_model=" + std::to_string(d));
}

TEST(Config, ReadsTypedValuesAndRecordsDefaults) {
  auto config = Config::parse("model:\n  d_model: 64\n", "exp.yaml");
  ConfigSection model(config, "model");
  EXPECT_EQ(model.get_int("d_model", 32), 64);
  EXPECT_EQ(model.get_int("depth", 6), 6);
  model.finish();
  auto resolved = config->resolved_yaml();
  EXPECT_NE(resolved.find("d_model: 64"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("depth: 6"), std::string::npos) << resolved;
}

TEST(Config, InconsistentValueNamesFileLineAndKey) {
  EXPECT_EQ(error_of(kModel, read_all), "config error: exp.yaml:4: model.num_heads: does not divide model.d_model=64");
}

TEST(Config, UnknownKeySuggestsTheClosestKnownKey) {
  auto yaml = "model:\n  d_model: 64\n  num_head: 4\n";
  EXPECT_EQ(error_of(yaml,
                     [](ConfigSection& m) {
                       m.get_int("d_model", 32);
                       m.get_int("num_heads", 4);
                     }),
            "config error: exp.yaml:3: model.num_head: unknown key in model (did you mean 'model.num_heads'?)");
}

TEST(Config, WrongTypeSaysWhatWasExpected) {
  auto yaml = "model:\n  d_model: sixty-four\n";
  EXPECT_EQ(error_of(yaml, [](ConfigSection& m) { m.get_int("d_model", 32); }),
            "config error: exp.yaml:2: model.d_model: expected an integer, got 'sixty-four'");
  EXPECT_EQ(error_of("model:\n  dropout: [1]\n", [](ConfigSection& m) { m.get_double("dropout", 0.0); }),
            "config error: exp.yaml:2: model.dropout: expected a number, got '[1]'");
  EXPECT_EQ(error_of("model:\n  bias: maybe\n", [](ConfigSection& m) { m.get_bool("bias", true); }),
            "config error: exp.yaml:2: model.bias: expected true or false, got 'maybe'");
}

TEST(Config, OutOfRangeValueGivesTheRange) {
  EXPECT_EQ(error_of("model:\n  dropout: 1.5\n", [](ConfigSection& m) { m.get_double("dropout", 0.0, 0.0, 1.0); }),
            "config error: exp.yaml:2: model.dropout: must be in [0, 1], got 1.5");
  EXPECT_EQ(error_of("model:\n  depth: 0\n", [](ConfigSection& m) { m.get_int("depth", 6, 1); }),
            "config error: exp.yaml:2: model.depth: must be >= 1, got 0");
}

TEST(Config, MissingRequiredKeyPointsAtItsSection) {
  EXPECT_EQ(error_of("model:\n  depth: 2\n",
                     [](ConfigSection& m) {
                       m.get_int("depth", 6);
                       m.require_string("name");
                     }),
            "config error: exp.yaml:1: model.name: required key is missing");
}

TEST(Config, BadChoiceListsTheOptionsAndSuggests) {
  EXPECT_EQ(error_of("model:\n  norm: pree\n", [](ConfigSection& m) { m.get_choice("norm", "post", {"pre", "post"}); }),
            "config error: exp.yaml:2: model.norm: 'pree' is not one of: pre, post (did you mean 'pre'?)");
}

TEST(Config, InvalidYamlNamesTheLine) {
  EXPECT_EQ(error_of("model:\n  d_model: [64\n  depth: 2\n", [](ConfigSection&) {}).substr(0, 38),
            "config error: exp.yaml:3: invalid YAML");
}

TEST(Config, DuplicateKeyIsAnError) {
  EXPECT_EQ(error_of("model:\n  depth: 2\n  depth: 3\n", [](ConfigSection& m) { m.get_int("depth", 1); }),
            "config error: exp.yaml:3: model.depth: key appears twice");
}

TEST(Config, SectionThatIsAValueIsAnError) {
  EXPECT_EQ(error_of("model: vit\n", [](ConfigSection&) {}),
            "config error: exp.yaml:1: model: expected a section (a mapping of keys), got 'vit'");
}

TEST(Config, OverridesReplaceFileValuesAndAreBlamedOnTheCommandLine) {
  auto config = Config::parse(kModel, "exp.yaml", {"model.num_heads=8", "model.extra.depth=3"});
  ConfigSection model(config, "model");
  EXPECT_EQ(model.get_int("num_heads", 1), 8);
  EXPECT_EQ(model.section("extra").get_int("depth", 1), 3);
  EXPECT_EQ(error_of(kModel, read_all, {"model.num_heads=abc"}),
            "config error: command line 'model.num_heads=abc': model.num_heads: expected an integer, got 'abc'");
  EXPECT_EQ(error_of(kModel, read_all, {"model.num_heads=4", "model.num_layers=3"}),
            "config error: command line 'model.num_layers=3': model.num_layers: unknown key in model");
  EXPECT_EQ(error_of(kModel, read_all, {"model.d_model.x=3"}),
            "config error: command line: model.d_model.x: model.d_model is a value, not a section");
  EXPECT_EQ(error_of(kModel, read_all, {"nonsense"}),
            "config error: command line: 'nonsense': overrides look like key.path=value");
}

TEST(Config, PathsResolveAgainstTheConfigFilesFolder) {
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path() / "attnzoo_config_test";
  fs::create_directories(dir / "configs");
  std::ofstream(dir / "configs" / "exp.yaml") << "data:\n  root: ../data/x\n";
  auto config = Config::load((dir / "configs" / "exp.yaml").string());
  ConfigSection data(config, "data");
  EXPECT_EQ(data.get_path("root", ""), (dir / "data" / "x").lexically_normal().string());
  fs::remove_all(dir);
}

TEST(Config, MissingFileIsAClearError) {
  try {
    Config::load("/nonexistent/exp.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "config error: /nonexistent/exp.yaml: no such file");
  }
}

TEST(Config, ResolvedConfigReadsBackToTheSameValues) {
  auto config = Config::parse(kModel, "exp.yaml", {"model.num_heads=4"});
  ConfigSection model(config, "model");
  read_all(model);
  auto again = Config::parse(config->resolved_yaml(), "config.yaml");
  ConfigSection model2(again, "model");
  EXPECT_EQ(model2.get_int("num_heads", 1), 4);
  EXPECT_EQ(model2.get_choice("norm", "post", {"pre", "post"}), "pre");
  EXPECT_DOUBLE_EQ(model2.get_double("dropout", 0.0), 0.1);
}

}  // namespace
}  // namespace attnzoo
