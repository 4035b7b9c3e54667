#include "trainers/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace attnzoo {
namespace fs = std::filesystem;

namespace {

std::string shape_text(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

// Tensor keys are positional ("t0", "t1", ...) and the names travel as data: archive keys cannot
// hold the dots of nested module names.
void write_named(torch::serialize::OutputArchive& archive, const std::vector<std::pair<std::string, torch::Tensor>>& named) {
  c10::List<std::string> names;
  for (size_t i = 0; i < named.size(); ++i) {
    names.push_back(named[i].first);
    archive.write("t" + std::to_string(i), named[i].second.detach().cpu());
  }
  archive.write("names", c10::IValue(names));
}

std::map<std::string, torch::Tensor> read_named(torch::serialize::InputArchive& archive) {
  c10::IValue names_value;
  archive.read("names", names_value);
  auto names = names_value.toList();
  std::map<std::string, torch::Tensor> result;
  for (size_t i = 0; i < names.size(); ++i) {
    torch::Tensor t;
    archive.read("t" + std::to_string(i), t);
    result[names.get(i).toStringRef()] = t;
  }
  return result;
}

int64_t read_int(torch::serialize::InputArchive& archive, const std::string& key) {
  c10::IValue v;
  archive.read(key, v);
  return v.toInt();
}

}  // namespace

std::vector<std::pair<std::string, torch::Tensor>> module_tensors(const torch::nn::Module& module) {
  std::vector<std::pair<std::string, torch::Tensor>> result;
  for (const auto& p : module.named_parameters()) result.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers()) result.emplace_back(b.key(), b.value());
  return result;
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot create {}: {}", tmp, std::strerror(errno)));
  const char* data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(err)));
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(err)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot rename {} to {}: {}", tmp, path, std::strerror(err)));
  }
  // Make the rename itself durable.
  int dir = ::open(target.has_parent_path() ? target.parent_path().c_str() : ".", O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void save_checkpoint(const std::string& path, const torch::nn::Module& model, const torch::optim::Optimizer* optimizer,
                     const std::vector<torch::Tensor>& ema, const TrainingState& state, const CheckpointMeta& meta) {
  torch::serialize::OutputArchive archive;
  archive.write("format_version", c10::IValue(kCheckpointFormatVersion));
  archive.write("family", c10::IValue(meta.family));
  archive.write("model_name", c10::IValue(meta.model_name));
  archive.write("config_yaml", c10::IValue(meta.config_yaml));

  torch::serialize::OutputArchive model_archive;
  write_named(model_archive, module_tensors(model));
  archive.write("model", model_archive);
  if (optimizer) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
  }
  if (!ema.empty()) {
    torch::serialize::OutputArchive ema_archive;
    std::vector<std::pair<std::string, torch::Tensor>> named;
    for (size_t i = 0; i < ema.size(); ++i) named.emplace_back(std::to_string(i), ema[i]);
    write_named(ema_archive, named);
    archive.write("ema", ema_archive);
  }
  archive.write("global_step", c10::IValue(state.global_step));
  archive.write("epoch", c10::IValue(state.epoch));
  archive.write("batch_in_epoch", c10::IValue(state.batch_in_epoch));
  archive.write("best_metric", c10::IValue(state.best_metric));
  archive.write("best_step", c10::IValue(state.best_step));
  archive.write("evals_without_improvement", c10::IValue(state.evals_without_improvement));
  archive.write("finished", c10::IValue(state.finished));
  archive.write("rng_cpu", at::detail::getDefaultCPUGenerator().get_state());

  std::ostringstream bytes;
  archive.save_to(bytes);
  try {
    write_file_atomically(path, bytes.str());
  } catch (const std::exception& e) {
    throw CheckpointError(fmt::format("checkpoint error: {}; the previous checkpoint is unchanged", e.what()));
  }
}

namespace {
torch::serialize::InputArchive open_archive(const std::string& path) {
  if (!fs::exists(path)) throw CheckpointError(fmt::format("checkpoint error: {}: no such file", path));
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
    c10::IValue version;
    if (!archive.try_read("format_version", version))
      throw CheckpointError(fmt::format("checkpoint error: {}: not an attnzoo checkpoint", path));
    if (version.toInt() > kCheckpointFormatVersion)
      throw CheckpointError(fmt::format("checkpoint error: {}: format version {} is newer than this attnzoo ({}); "
                                        "update attnzoo",
                                        path, version.toInt(), kCheckpointFormatVersion));
  } catch (const c10::Error& e) {
    throw CheckpointError(fmt::format("checkpoint error: {}: unreadable (truncated or corrupt file)", path));
  }
  return archive;
}

CheckpointMeta read_meta(torch::serialize::InputArchive& archive) {
  CheckpointMeta meta;
  c10::IValue v;
  archive.read("family", v);
  meta.family = v.toStringRef();
  archive.read("model_name", v);
  meta.model_name = v.toStringRef();
  archive.read("config_yaml", v);
  meta.config_yaml = v.toStringRef();
  return meta;
}
}  // namespace

CheckpointMeta read_checkpoint_meta(const std::string& path) {
  auto archive = open_archive(path);
  try {
    return read_meta(archive);
  } catch (const c10::Error&) {
    throw CheckpointError(fmt::format("checkpoint error: {}: unreadable (truncated or corrupt file)", path));
  }
}

TrainingState load_checkpoint(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer* optimizer,
                              std::vector<torch::Tensor>* ema, CheckpointMeta* meta) {
  auto archive = open_archive(path);
  TrainingState state;
  try {
    if (meta) *meta = read_meta(archive);
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    auto saved = read_named(model_archive);
    auto current = module_tensors(model);
    // Check everything before changing anything, so a mismatch leaves the model as it was.
    for (const auto& [name, tensor] : current) {
      auto it = saved.find(name);
      if (it == saved.end())
        throw CheckpointError(fmt::format("checkpoint error: {} holds a different model: it has no '{}'; "
                                          "use a new run directory (out=...) for a different model",
                                          path, name));
      if (!it->second.sizes().equals(tensor.sizes()))
        throw CheckpointError(fmt::format("checkpoint error: {} holds a different model: '{}' is {} there but {} "
                                          "here; use a new run directory (out=...) for a different model",
                                          path, name, shape_text(it->second), shape_text(tensor)));
    }
    if (saved.size() != current.size())
      throw CheckpointError(fmt::format("checkpoint error: {} holds a different model ({} tensors there, {} here); "
                                        "use a new run directory (out=...) for a different model",
                                        path, saved.size(), current.size()));
    {
      torch::NoGradGuard no_grad;
      for (auto& [name, tensor] : current) tensor.copy_(saved.at(name));
    }
    if (optimizer) {
      torch::serialize::InputArchive optimizer_archive;
      if (archive.try_read("optimizer", optimizer_archive)) optimizer->load(optimizer_archive);
    }
    if (ema) {
      ema->clear();
      torch::serialize::InputArchive ema_archive;
      if (archive.try_read("ema", ema_archive)) {
        auto named = read_named(ema_archive);
        ema->resize(named.size());
        for (auto& [index, tensor] : named) (*ema)[std::stoul(index)] = tensor;
      }
    }
    state.global_step = read_int(archive, "global_step");
    state.epoch = read_int(archive, "epoch");
    state.batch_in_epoch = read_int(archive, "batch_in_epoch");
    c10::IValue v;
    archive.read("best_metric", v);
    state.best_metric = v.toDouble();
    state.best_step = read_int(archive, "best_step");
    state.evals_without_improvement = read_int(archive, "evals_without_improvement");
    archive.read("finished", v);
    state.finished = v.toBool();
    torch::Tensor rng;
    archive.read("rng_cpu", rng);
    auto generator = at::detail::getDefaultCPUGenerator();
    generator.set_state(rng);
  } catch (const c10::Error& e) {
    throw CheckpointError(fmt::format("checkpoint error: {}: unreadable or incomplete ({})", path,
                                      std::string(e.what_without_backtrace()).substr(0, 200)));
  }
  return state;
}

}  // namespace attnzoo
