#include "trainers/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <torch/torch.h>

#include <csignal>
#include <fstream>

#include "test_fixtures.h"

namespace attnzoo {
namespace {

TEST(Checkpoint, RoundTripsModelOptimizerAndState) {
  testing::TempDir dir("checkpoint_roundtrip");
  torch::manual_seed(0);
  torch::nn::Linear a(4, 3), b(4, 3);
  torch::optim::Adam optimizer(a->parameters(), torch::optim::AdamOptions(0.1));
  a->forward(torch::randn({2, 4})).sum().backward();
  optimizer.step();
  TrainingState state;
  state.global_step = 7;
  state.epoch = 1;
  state.batch_in_epoch = 3;
  state.best_metric = 0.5;
  save_checkpoint(dir.str("c.pt"), *a, &optimizer, {}, state, {"linear", "lin", "name: x\n"});

  torch::optim::Adam optimizer_b(b->parameters(), torch::optim::AdamOptions(0.1));
  CheckpointMeta meta;
  auto loaded = load_checkpoint(dir.str("c.pt"), *b, &optimizer_b, nullptr, &meta);
  EXPECT_TRUE(torch::equal(a->weight, b->weight));
  EXPECT_EQ(loaded.global_step, 7);
  EXPECT_EQ(loaded.batch_in_epoch, 3);
  EXPECT_DOUBLE_EQ(loaded.best_metric, 0.5);
  EXPECT_EQ(meta.family, "linear");
  EXPECT_EQ(meta.config_yaml, "name: x\n");
  EXPECT_EQ(optimizer_b.state().size(), optimizer.state().size());
}

TEST(Checkpoint, TruncatedFileIsRefusedWithItsName) {
  testing::TempDir dir("checkpoint_truncated");
  torch::nn::Linear a(4, 3);
  save_checkpoint(dir.str("c.pt"), *a, nullptr, {}, {}, {"linear", "lin", ""});
  auto bytes = testing::read_file(dir.str("c.pt"));
  std::ofstream(dir.str("cut.pt"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  try {
    load_checkpoint(dir.str("cut.pt"), *a, nullptr, nullptr, nullptr);
    FAIL() << "no error";
  } catch (const CheckpointError& e) {
    EXPECT_EQ(std::string(e.what()), "checkpoint error: " + dir.str("cut.pt") + ": unreadable (truncated or corrupt file)");
  }
}

TEST(Checkpoint, DifferentShapesAreRefusedBeforeAnythingChanges) {
  testing::TempDir dir("checkpoint_shape");
  torch::nn::Linear small(4, 3), big(4, 5);
  save_checkpoint(dir.str("c.pt"), *small, nullptr, {}, {}, {"linear", "lin", ""});
  auto before = big->weight.clone();
  try {
    load_checkpoint(dir.str("c.pt"), *big, nullptr, nullptr, nullptr);
    FAIL() << "no error";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("holds a different model: 'weight' is [3, 4] there but [5, 4] here"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(torch::equal(before, big->weight));
}

TEST(Checkpoint, FullDiskLeavesThePreviousCheckpointIntact) {
  testing::TempDir dir("checkpoint_full");
  torch::nn::Linear small(4, 3), big(512, 512);
  save_checkpoint(dir.str("c.pt"), *small, nullptr, {}, {}, {"linear", "lin", ""});
  auto before = testing::read_file(dir.str("c.pt"));
  // A file-size limit makes write() fail the way a full disk does.
  struct rlimit old_limit;
  getrlimit(RLIMIT_FSIZE, &old_limit);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 64 * 1024;
  setrlimit(RLIMIT_FSIZE, &limit);
  std::string message;
  try {
    save_checkpoint(dir.str("c.pt"), *big, nullptr, {}, {}, {"linear", "lin", ""});
  } catch (const CheckpointError& e) {
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(message.find("the previous checkpoint is unchanged"), std::string::npos) << message;
  EXPECT_EQ(testing::read_file(dir.str("c.pt")), before);
  EXPECT_FALSE(std::filesystem::exists(dir.str("c.pt.tmp")));
}

}  // namespace
}  // namespace attnzoo
