// src/cli/parse.cc — the command line of every command parsed the one way (commands.h).
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.h"
#include "flopwise/errors.h"
#include "output.h"

namespace flopwise {

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const std::string& command) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {  // --version: "flopwise 0.1.0" on stdout, exit 0
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string name = command.empty() ? "flopwise" : "flopwise " + command;
    print_error(name + ": error: ", "UsageError", std::string(e.what()) + " (see " + name + " --help)");
    return kExitBadInput;
  }
  return std::nullopt;
}

void add_train_options(CLI::App& app, TrainArgs& t, bool both) {
  const std::string side = both ? " on both sides" : "";
  app.add_flag(
      "--train", t.train,
      both ? "compare the two models' training steps too: backward MACs and FLOPs, trainable params, kept "
             "activations, optimizer state, the memory estimate (flopwise --train)"
           : "one training step, op by op: backward MACs and FLOPs as autograd computes them (a gradient "
             "only where one is needed), trainable params, kept activations, gradient and optimizer "
             "state bytes, a memory estimate (docs/training.md)");
  app.add_option("--freeze", t.freeze,
                 "with --train: a scope (glob) whose parameters are frozen" + side +
                     ", with everything under it; repeat");
  app.add_option("--checkpoint", t.checkpoint,
                 "with --train: a scope (glob) run under activation checkpointing" + side +
                     ": it keeps only what enters it and runs its forward again in the backward; repeat");
  app.add_option("--optimizer", t.optimizer, "with --train: sgd | momentum | adam | adamw (default adamw)");
  app.add_option(
      "--precision", t.precision,
      "with --train: fp32 (default) | bf16-mixed | fp16-mixed: torch.autocast's dtypes for what the "
      "backward keeps (CUDA's op lists), fp32 weights, gradients and optimizer state; bf16-master | "
      "fp16-master: 16-bit weights, gradients and activations, fp32 master weights in the optimizer (K = "
      "12)");
  app.add_option("--device", t.device,
                 "with --train: cuda (default) | cpu: whose kernels decide what the backward keeps where "
                 "they differ (a dropout's bool mask on CUDA, its float noise on the CPU)");
}

std::optional<TrainOptions> TrainArgs::options(bool also, const char* also_name) const {
  if (!train) {
    if (!freeze.empty() || !checkpoint.empty() || optimizer != "adamw" || precision != "fp32" ||
        device != "cuda" || also)
      throw UsageError(std::string("--freeze, --checkpoint, --optimizer, --precision, --device") +
                       (also_name[0] ? std::string(", ") + also_name : std::string()) +
                       " describe a training step: add --train");
    return std::nullopt;
  }
  return TrainOptions{freeze, checkpoint, parse_optimizer(optimizer), parse_precision(precision),
                      parse_device(device)};
}

}  // namespace flopwise
