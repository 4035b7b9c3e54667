// The attnzoo command line as a user meets it: exit codes and the one line it prints on bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>

#include "test_fixtures.h"
#include "test_paths.h"

namespace attnzoo {
namespace {

struct Run {
  int exit_code;
  std::string output;  // stdout and stderr
};

Run run(const std::string& arguments) {
  std::string command = std::string(ATTNZOO_CLI) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  std::array<char, 4096> buffer;
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

class CliTest : public ::testing::Test {
 protected:
  CliTest() : dir_("cli") { testing::write_tiny_mnist(dir_.path() / "data", 64, 16); }
  std::string write_config(const std::string& extra = "", const std::string& trainer = "epochs: 1") {
    std::ofstream(dir_.str("exp.yaml")) << "name: cli\n"
                                           "out: run\n"
                                           "model: {name: vit_micro}\n"
                                           "data: {name: mnist, root: data, batch_size: 16, num_workers: 1}\n"
                                           "trainer: {" + trainer + ", progress_bar: false}\n" + extra;
    return dir_.str("exp.yaml");
  }
  testing::TempDir dir_;
};

TEST_F(CliTest, MisspeltKeyExitsWithTwoAndOneLineNamingFileLineAndKey) {
  auto config = write_config("", "epoch: 1");
  auto r = run("train " + config);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "config error: " + config +
                          ":5: trainer.epoch: unknown key in trainer (did you mean 'trainer.epochs'?)\n");
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "run")) << "nothing may be written for a bad config";
}

TEST_F(CliTest, BadOverrideIsBlamedOnTheCommandLine) {
  auto r = run("train " + write_config() + " trainer.precision=bf61");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output,
            "config error: command line 'trainer.precision=bf61': trainer.precision: 'bf61' is not one of: fp32, bf16, "
            "fp16 (did you mean 'bf16'?)\n");
}

TEST_F(CliTest, MissingDataFolderSaysWhichAndWhatToDo) {
  auto r = run("train " + write_config() + " data.root=" + dir_.str("nowhere"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.rfind("data error: " + dir_.str("nowhere"), 0), 0u) << r.output;
  EXPECT_NE(r.output.find("put MNIST's four IDX files"), std::string::npos) << r.output;
}

TEST_F(CliTest, ModelMistakesAreReportedBeforeAnyDataIsRead) {
  // The data folder does not exist either: the model error must come first, before any loading.
  auto r = run("train " + write_config() + " model.num_heads=3 data.root=" + dir_.str("nowhere"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.rfind("config error: command line 'model.num_heads=3': model.num_heads: ", 0), 0u) << r.output;
}

TEST_F(CliTest, EmptyImageFolderIsAClearError) {
  std::filesystem::create_directories(dir_.path() / "empty");
  auto r = run("train " + write_config() + " data.name=image_folder data.root=" + dir_.str("empty"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.rfind("data error: ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find(dir_.str("empty")), std::string::npos) << r.output;
}

TEST_F(CliTest, InvalidYamlNamesTheLine) {
  std::ofstream(dir_.str("bad.yaml")) << "name: x\nmodel: {name: vit_micro\n";
  auto r = run("train " + dir_.str("bad.yaml"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.rfind("config error: " + dir_.str("bad.yaml") + ":", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("invalid YAML"), std::string::npos) << r.output;
}

TEST_F(CliTest, TrainsThenRefusesACheckpointOfAnotherModel) {
  auto config = write_config();
  auto trained = run("train " + config);
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  EXPECT_NE(trained.output.find("done: test accuracy"), std::string::npos) << trained.output;
  auto before = testing::read_file(dir_.str("run/checkpoints/last.pt"));
  auto r = run("train " + config + " model.d_model=48");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.rfind("checkpoint error: ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("holds a different model"), std::string::npos) << r.output;
  EXPECT_EQ(testing::read_file(dir_.str("run/checkpoints/last.pt")), before);
}

TEST_F(CliTest, CtrlCWritesACheckpointAndExits130ThenTheRunResumes) {
  auto config = write_config("", "epochs: 100000");
  // SIGINT after a few seconds, while training; --preserve-status passes attnzoo's own exit code on.
  std::string command = "timeout --preserve-status -s INT 6 " + std::string(ATTNZOO_CLI) + " train " + config;
  int status = std::system((command + " > " + dir_.str("out.txt") + " 2>&1").c_str());
  auto output = testing::read_file(dir_.str("out.txt"));
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 130) << output;
  EXPECT_NE(output.find("interrupted: checkpoint saved at step"), std::string::npos) << output;
  auto resumed = run("train " + config + " trainer.epochs=1 trainer.max_steps=1");
  EXPECT_NE(resumed.output.find("resuming"), std::string::npos) << resumed.output;
}

TEST(Cli, ZooListsThePresetsWithParameterCounts) {
  auto r = run("zoo");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("vit_base"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("86.57M"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace attnzoo
