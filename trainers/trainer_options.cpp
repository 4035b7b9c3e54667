#include "trainers/trainer_options.h"

namespace attnzoo {

TrainerOptions read_trainer_options(ConfigSection s) {
  TrainerOptions o;
  o.epochs = s.get_int("epochs", o.epochs, 1);
  o.max_steps = s.get_int("max_steps", o.max_steps, 0);
  o.precision = s.get_choice("precision", o.precision, {"fp32", "bf16", "fp16"});
  o.device = s.get_choice("device", o.device, {"auto", "cpu", "cuda"});
  if (o.precision == "fp16" && o.device != "cuda")
    s.fail("precision", "fp16 autocast needs trainer.device=cuda; on CPU use bf16");
  o.threads = s.get_int("threads", o.threads, 0, 1024);
  o.grad_clip_norm = s.get_double("grad_clip_norm", o.grad_clip_norm, 0.0);
  o.grad_accumulation = s.get_int("grad_accumulation", o.grad_accumulation, 1, 4096);
  o.label_smoothing = s.get_double("label_smoothing", o.label_smoothing, 0.0, 0.999);
  o.ema_decay = s.get_double("ema_decay", o.ema_decay, 0.0, 0.999999);
  o.log_every_steps = s.get_int("log_every_steps", o.log_every_steps, 1);
  o.eval_every_steps = s.get_int("eval_every_steps", o.eval_every_steps, 0);
  o.eval_every_epochs = s.get_int("eval_every_epochs", o.eval_every_epochs, 1);
  o.checkpoint_every_steps = s.get_int("checkpoint_every_steps", o.checkpoint_every_steps, 0);
  o.monitor = s.get_string("monitor", o.monitor);
  o.monitor_mode = s.get_choice("monitor_mode", o.monitor_mode, {"auto", "max", "min"});
  if (o.monitor_mode == "auto")
    o.monitor_mode = (o.monitor == "loss" || o.monitor == "perplexity") ? "min" : "max";
  o.early_stopping_patience = s.get_int("early_stopping_patience", o.early_stopping_patience, 0);
  o.progress_bar = s.get_bool("progress_bar", o.progress_bar);
  s.finish();
  return o;
}

}  // namespace attnzoo
