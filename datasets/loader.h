#pragma once
// The threaded data loader: batches of a Dataset in a reproducible order, prepared ahead by worker threads.
//
// Reproducibility: epoch e's order is a permutation drawn from a generator seeded by (seed, e), and example i's
// augmentation generator is seeded by (seed, e, i). No torch global RNG is used, so the batches are identical
// whatever num_workers is, and start_epoch(e, k) resumes at batch k of the straight epoch bit for bit.
//
// Threads: num_workers threads each build whole batches (get() per example, one collate per batch) up to
// prefetch_batches ahead of the caller, and hand them over in order. num_workers = 0 builds each batch in the
// caller. An exception thrown while building batch k is re-thrown by the next() that would return batch k.
#include <cstdint>
#include <memory>
#include <optional>

#include "datasets/batch.h"
#include "datasets/dataset.h"

namespace attnzoo {

struct LoaderOptions {
  int64_t batch_size = 64;
  bool shuffle = true;
  bool drop_last = false;  // drop a final batch smaller than batch_size
  int64_t num_workers = 2;
  int64_t prefetch_batches = 4;  // batches ready or in progress ahead of the caller (at least num_workers)
  uint64_t seed = 0;
};

class DataLoader {
 public:
  DataLoader(std::shared_ptr<const Dataset> dataset, LoaderOptions options);
  // Stops and joins the workers, also mid-epoch.
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  int64_t batches_per_epoch() const;
  // Begins epoch `epoch` at batch `skip_batches` (0 <= skip_batches <= batches_per_epoch()), stopping any epoch in
  // progress first.
  void start_epoch(int64_t epoch, int64_t skip_batches = 0);
  // The next batch of the epoch, or nullopt at its end. Throws what building the batch threw.
  std::optional<Batch> next();
  // Seconds the caller spent blocked in next() this epoch (all of the loading time when num_workers = 0): if it is
  // a large part of the epoch, the loader starves the trainer.
  double wait_seconds() const;

  const LoaderOptions& options() const;
  const Dataset& dataset() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace attnzoo
