// The threaded loader: same batches whatever the thread count, exact resume, errors re-thrown in order, and clean
// shutdown mid-epoch. A fake dataset records which index and which generator state made each example.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <stdexcept>
#include <thread>

#include "datasets/loader.h"

namespace attnzoo {
namespace {

// Example i: input = [i, first draw of its generator as a float in [0, 1)], target = i.
class CountingDataset : public Dataset {
 public:
  explicit CountingDataset(size_t size, int64_t fail_at = -1, std::chrono::microseconds delay = {})
      : size_(size), fail_at_(fail_at), delay_(delay) {}
  size_t size() const override { return size_; }
  Example get(size_t index, std::mt19937_64& rng) const override {
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    if (static_cast<int64_t>(index) == fail_at_) throw std::runtime_error("example " + std::to_string(index) + " is bad");
    const double draw = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    return {torch::tensor({static_cast<double>(index), draw}, torch::kFloat64),
            torch::scalar_tensor(static_cast<int64_t>(index), torch::kInt64), std::to_string(index)};
  }
  std::vector<int64_t> input_shape() const override { return {2}; }
  std::string describe() const override { return "counting"; }

 private:
  size_t size_;
  int64_t fail_at_;
  std::chrono::microseconds delay_;
};

LoaderOptions options_with(int64_t workers, int64_t batch_size = 4, uint64_t seed = 11) {
  LoaderOptions options;
  options.batch_size = batch_size;
  options.num_workers = workers;
  options.seed = seed;
  return options;
}

std::vector<Batch> whole_epoch(DataLoader& loader, int64_t epoch, int64_t skip = 0) {
  loader.start_epoch(epoch, skip);
  std::vector<Batch> batches;
  while (auto batch = loader.next()) batches.push_back(std::move(*batch));
  return batches;
}

void expect_same_batches(const std::vector<Batch>& a, const std::vector<Batch>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i].input, b[i].input)) << "batch " << i;
    EXPECT_TRUE(torch::equal(a[i].target, b[i].target)) << "batch " << i;
    EXPECT_EQ(a[i].ids, b[i].ids) << "batch " << i;
  }
}

TEST(DataLoader, EpochVisitsEveryExampleOnceInShuffledBatches) {
  auto dataset = std::make_shared<CountingDataset>(10);
  DataLoader loader(dataset, options_with(2));
  EXPECT_EQ(loader.batches_per_epoch(), 3);
  const auto batches = whole_epoch(loader, 0);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0].size(), 4);
  EXPECT_EQ(batches[2].size(), 2);  // the last, partial batch
  std::vector<int64_t> seen;
  for (const auto& batch : batches)
    for (int64_t i = 0; i < batch.size(); ++i) seen.push_back(batch.target[i].item<int64_t>());
  std::vector<int64_t> sorted = seen;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_NE(seen, sorted);  // shuffled
  EXPECT_GE(loader.wait_seconds(), 0.0);

  LoaderOptions in_order = options_with(0);
  in_order.shuffle = false;
  in_order.drop_last = true;
  DataLoader straight(dataset, in_order);
  EXPECT_EQ(straight.batches_per_epoch(), 2);
  const auto kept = whole_epoch(straight, 0);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_TRUE(torch::equal(kept[1].target, torch::tensor({4, 5, 6, 7}, torch::kInt64)));
}

TEST(DataLoader, BatchesAreIdenticalWhateverTheNumberOfWorkers) {
  auto dataset = std::make_shared<CountingDataset>(37);
  DataLoader synchronous(dataset, options_with(0, 5));
  DataLoader threaded(dataset, options_with(3, 5));
  for (int64_t epoch : {0, 1}) expect_same_batches(whole_epoch(synchronous, epoch), whole_epoch(threaded, epoch));
}

TEST(DataLoader, OrderAndAugmentationDependOnSeedAndEpoch) {
  auto dataset = std::make_shared<CountingDataset>(20);
  DataLoader loader(dataset, options_with(2));
  const auto epoch0 = whole_epoch(loader, 0);
  const auto epoch1 = whole_epoch(loader, 1);
  EXPECT_FALSE(torch::equal(epoch0[0].target, epoch1[0].target));
  expect_same_batches(epoch0, whole_epoch(loader, 0));  // an epoch can be replayed
  DataLoader other_seed(dataset, options_with(2, 4, 12));
  EXPECT_FALSE(torch::equal(epoch0[0].input, whole_epoch(other_seed, 0)[0].input));
  // Example i's generator depends on (seed, epoch, i) only: the same example gets the same draw in any position.
  LoaderOptions unshuffled = options_with(1);
  unshuffled.shuffle = false;
  DataLoader straight(dataset, unshuffled);
  const auto in_order = whole_epoch(straight, 0);
  const int64_t first = epoch0[0].target[0].item<int64_t>();
  EXPECT_EQ(epoch0[0].input[0][1].item<double>(), in_order[first / 4].input[first % 4][1].item<double>());
}

TEST(DataLoader, SkippingBatchesResumesTheStraightEpoch) {
  auto dataset = std::make_shared<CountingDataset>(23);
  for (int64_t workers : {0, 2}) {
    DataLoader loader(dataset, options_with(workers));
    const auto straight = whole_epoch(loader, 3);
    ASSERT_EQ(straight.size(), 6u);
    for (int64_t skip : {1, 4, 6}) {
      const auto resumed = whole_epoch(loader, 3, skip);
      expect_same_batches(resumed, std::vector<Batch>(straight.begin() + skip, straight.end()));
    }
    EXPECT_THROW(loader.start_epoch(3, 7), std::out_of_range);
  }
}

TEST(DataLoader, WorkerExceptionsAreRethrownFromNextInOrder) {
  // Example 9 is in batch 2 of an unshuffled epoch; batches 0 and 1 still arrive first.
  auto dataset = std::make_shared<CountingDataset>(16, /*fail_at=*/9);
  for (int64_t workers : {0, 3}) {
    LoaderOptions options = options_with(workers);
    options.shuffle = false;
    DataLoader loader(dataset, options);
    loader.start_epoch(0);
    EXPECT_TRUE(loader.next().has_value());
    EXPECT_TRUE(loader.next().has_value());
    try {
      loader.next();
      FAIL() << "expected the worker's exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "example 9 is bad");
    }
    EXPECT_THROW(loader.next(), std::runtime_error);  // the epoch stays failed, not silently shorter
    loader.start_epoch(1, 3);                          // a new epoch starts cleanly
    EXPECT_TRUE(loader.next().has_value());
  }
}

// Runs `work` on its own thread and says whether it finished within `limit` (a deadlock would not).
template <class Work>
bool finishes_within(std::chrono::seconds limit, Work work) {
  auto done = std::make_shared<std::promise<void>>();
  auto future = done->get_future();
  std::thread([done, work]() mutable {
    work();
    done->set_value();
  }).detach();
  return future.wait_for(limit) == std::future_status::ready;
}

TEST(DataLoader, StopsCleanlyMidEpoch) {
  auto slow = std::make_shared<CountingDataset>(400, -1, std::chrono::microseconds(500));
  auto batches_after_restart = std::make_shared<std::atomic<int64_t>>(0);
  EXPECT_TRUE(finishes_within(std::chrono::seconds(20), [slow, batches_after_restart] {
    {
      DataLoader loader(slow, options_with(3));
      loader.start_epoch(0);
      (void)loader.next();
    }  // destroyed with workers busy and batches waiting
    {
      DataLoader loader(slow, options_with(3));
      loader.start_epoch(0);
      (void)loader.next();
      loader.start_epoch(1, 95);  // restart mid-epoch, near the end
      while (loader.next()) ++*batches_after_restart;
    }
    {
      DataLoader never_started(slow, options_with(2));
    }
  }));
  EXPECT_EQ(batches_after_restart->load(), 5);  // batches 95..99
}

// Records at::get_num_threads() in the thread that builds each example.
class ThreadCountDataset : public CountingDataset {
 public:
  using CountingDataset::CountingDataset;
  Example get(size_t index, std::mt19937_64& rng) const override {
    Example example = CountingDataset::get(index, rng);
    example.input[1] = static_cast<double>(at::get_num_threads());
    return example;
  }
};

TEST(DataLoader, WorkersUseOneIntraOpThreadWithoutChangingTheCallers) {
  const int caller_threads = at::get_num_threads();
  DataLoader loader(std::make_shared<ThreadCountDataset>(12), options_with(2));
  for (const auto& batch : whole_epoch(loader, 0))
    EXPECT_TRUE(torch::all(batch.input.select(1, 1) == 1.0).item<bool>());
  EXPECT_EQ(at::get_num_threads(), caller_threads);
}

TEST(DataLoader, ReportsTimeSpentWaiting) {
  auto slow = std::make_shared<CountingDataset>(8, -1, std::chrono::microseconds(2000));
  DataLoader loader(slow, options_with(0));
  whole_epoch(loader, 0);
  EXPECT_GE(loader.wait_seconds(), 0.015);  // 8 examples x 2 ms, all in the caller
  loader.start_epoch(1);
  EXPECT_EQ(loader.wait_seconds(), 0.0);
  EXPECT_THROW({ DataLoader bad(slow, options_with(-1)); }, std::invalid_argument);
}

}  // namespace
}  // namespace attnzoo
