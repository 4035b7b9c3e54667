#include "datasets/loader.h"

#include <torch/torch.h>

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "datasets/random.h"

namespace attnzoo {
namespace {

constexpr uint64_t kOrderStream = 0x6f72646572;  // "order": keeps the order generator apart from example generators

// at::set_num_threads is process-wide, but OpenMP's thread count is a per-thread setting: a worker asks for one
// intra-op thread for itself without touching the trainer's. at::get_num_threads() first, because LibTorch
// lazily sets each thread's count on its first parallel call and would undo ours. omp_set_num_threads is looked
// up at run time, so there is no link dependency on libgomp and nothing happens without OpenMP.
void use_one_intra_op_thread_in_this_thread() {
  using SetNumThreads = void (*)(int);
  static const auto set_num_threads = reinterpret_cast<SetNumThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  (void)at::get_num_threads();
  if (set_num_threads != nullptr) set_num_threads(1);
}

// A built batch, or what building it threw.
struct Slot {
  Batch batch;
  std::exception_ptr error;
};

}  // namespace

struct DataLoader::State {
  std::shared_ptr<const Dataset> dataset;
  LoaderOptions options;

  // The epoch; set by start_epoch, read-only while workers run.
  int64_t epoch = 0;
  bool started = false;
  std::vector<int64_t> order;  // example indices in epoch order
  int64_t num_batches = 0;

  // Caller side.
  int64_t next_to_deliver = 0;
  double wait_seconds = 0.0;
  std::exception_ptr failed;  // once a batch failed, the epoch is over: next() keeps re-throwing it

  // Shared with the workers, under `mutex`.
  std::mutex mutex;
  std::condition_variable work_wanted;  // workers: a batch may be claimed, or stop
  std::condition_variable batch_built;  // caller: a batch arrived
  int64_t next_to_claim = 0;
  int64_t delivered = 0;  // copy of next_to_deliver the workers can read under the mutex
  bool stopping = false;
  std::map<int64_t, Slot> built;
  std::vector<std::thread> workers;

  int64_t window() const { return std::max<int64_t>(options.prefetch_batches, options.num_workers); }

  Batch build(int64_t batch_index) const {
    const int64_t begin = batch_index * options.batch_size;
    const int64_t end = std::min<int64_t>(begin + options.batch_size, static_cast<int64_t>(order.size()));
    std::vector<Example> examples;
    examples.reserve(static_cast<size_t>(end - begin));
    for (int64_t position = begin; position < end; ++position) {
      const auto index = static_cast<uint64_t>(order[static_cast<size_t>(position)]);
      std::mt19937_64 rng(mix_seed({options.seed, static_cast<uint64_t>(epoch), index}));
      examples.push_back(dataset->get(index, rng));
    }
    return dataset->collate(std::move(examples));
  }

  void work() {
    use_one_intra_op_thread_in_this_thread();
    while (true) {
      int64_t batch_index = 0;
      {
        std::unique_lock<std::mutex> lock(mutex);
        work_wanted.wait(lock, [&] {
          return stopping || next_to_claim >= num_batches || next_to_claim < delivered + window();
        });
        if (stopping || next_to_claim >= num_batches) return;
        batch_index = next_to_claim++;
      }
      Slot slot;
      try {
        slot.batch = build(batch_index);
      } catch (...) {
        slot.error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        built.emplace(batch_index, std::move(slot));
      }
      batch_built.notify_all();
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    work_wanted.notify_all();
    for (auto& worker : workers) worker.join();
    workers.clear();
    std::lock_guard<std::mutex> lock(mutex);
    stopping = false;
    built.clear();
  }
};

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, LoaderOptions options)
    : state_(std::make_unique<State>()) {
  if (!dataset) throw std::invalid_argument("DataLoader: no dataset");
  if (options.batch_size <= 0 || options.num_workers < 0 || options.prefetch_batches < 0)
    throw std::invalid_argument(fmt::format("DataLoader: bad options (batch_size {}, num_workers {}, prefetch {})",
                                            options.batch_size, options.num_workers, options.prefetch_batches));
  state_->dataset = std::move(dataset);
  state_->options = options;
}

DataLoader::~DataLoader() { state_->stop_workers(); }

int64_t DataLoader::batches_per_epoch() const {
  const auto size = static_cast<int64_t>(state_->dataset->size());
  const int64_t batch_size = state_->options.batch_size;
  return state_->options.drop_last ? size / batch_size : (size + batch_size - 1) / batch_size;
}

void DataLoader::start_epoch(int64_t epoch, int64_t skip_batches) {
  State& s = *state_;
  s.stop_workers();
  const int64_t num_batches = batches_per_epoch();
  if (epoch < 0 || skip_batches < 0 || skip_batches > num_batches)
    throw std::out_of_range(fmt::format("DataLoader::start_epoch: epoch {} skip {} (the epoch has {} batches)", epoch,
                                        skip_batches, num_batches));
  s.epoch = epoch;
  s.started = true;
  s.num_batches = num_batches;
  s.order.resize(s.dataset->size());
  std::iota(s.order.begin(), s.order.end(), int64_t{0});
  if (s.options.shuffle) {
    std::mt19937_64 rng(mix_seed({kOrderStream, s.options.seed, static_cast<uint64_t>(epoch)}));
    shuffle_in_place(s.order, rng);
  }
  s.next_to_deliver = skip_batches;
  s.wait_seconds = 0.0;
  s.failed = nullptr;
  s.next_to_claim = skip_batches;
  s.delivered = skip_batches;
  const int64_t workers = std::min(s.options.num_workers, num_batches - skip_batches);
  for (int64_t w = 0; w < workers; ++w) s.workers.emplace_back([&s] { s.work(); });
}

std::optional<Batch> DataLoader::next() {
  State& s = *state_;
  if (!s.started) throw std::logic_error("DataLoader::next called before start_epoch");
  if (s.failed) std::rethrow_exception(s.failed);
  if (s.next_to_deliver >= s.num_batches) return std::nullopt;

  const auto start = std::chrono::steady_clock::now();
  auto add_wait = [&] { s.wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const int64_t batch_index = s.next_to_deliver;
  Slot slot;
  if (s.options.num_workers == 0) {
    try {
      slot.batch = s.build(batch_index);
    } catch (...) {
      slot.error = std::current_exception();
    }
  } else {
    std::unique_lock<std::mutex> lock(s.mutex);
    s.batch_built.wait(lock, [&] { return s.built.count(batch_index) > 0; });
    auto found = s.built.find(batch_index);
    slot = std::move(found->second);
    s.built.erase(found);
    s.delivered = batch_index + 1;
  }
  s.next_to_deliver = batch_index + 1;
  s.work_wanted.notify_all();  // the window moved on: a worker may claim another batch
  add_wait();
  if (slot.error) {
    s.failed = slot.error;
    s.stop_workers();
    std::rethrow_exception(slot.error);
  }
  return std::move(slot.batch);
}

double DataLoader::wait_seconds() const { return state_->wait_seconds; }

const LoaderOptions& DataLoader::options() const { return state_->options; }

const Dataset& DataLoader::dataset() const { return *state_->dataset; }

}  // namespace attnzoo
