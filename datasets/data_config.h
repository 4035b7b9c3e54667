#pragma once
// The `data:` section of an experiment: which dataset, where, how it is split, augmented and batched.
//
//   data:
//     name: fashion_mnist        # fashion_mnist | mnist | image_folder
//     root: ../../data/fashion-mnist   # resolved against the config file's folder
//     val_fraction: 0.1          # held out from train, same images on every run (0: no val set)
//     test_fraction: 0.1         # image_folder without a test/ folder only
//     train_limit: 0             # use only this many training images (0 = all); for smoke tests
//     image_size: 0              # resize to image_size x image_size (0 = native size)
//     augment: {random_crop_padding: 0, horizontal_flip: false}   # train split only
//     normalize: {mean: [0.2860], std: [0.3530]}                  # defaults per dataset
//     batch_size: 128
//     eval_batch_size: 256       # default 2 x batch_size
//     num_workers: 2
//     prefetch_batches: 4
//
// An image_folder root holds either one subfolder per class, or train/ (and optionally val/, test/) folders that
// each hold one subfolder per class; splits without a folder are held out from train by the fractions.
#include <cstdint>
#include <memory>

#include "datasets/dataset.h"
#include "datasets/loader.h"
#include "trainers/config.h"

namespace attnzoo {

struct DataSplits {
  std::shared_ptr<Dataset> train, val, test;  // val (and an image folder's test) may be nullptr
  LoaderOptions train_loader, eval_loader;
};

// Reads `data` strictly (ConfigError for bad keys or values) and loads the data (DataError, with the fix, for
// missing or unusable files). `seed` seeds the loaders' order and augmentation, not the splits.
DataSplits build_datasets(ConfigSection data, uint64_t seed);

}  // namespace attnzoo
