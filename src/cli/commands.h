// src/cli/commands.h — the CLI's subcommands. main.cc dispatches on the first argument.
#pragma once

namespace flopwise {

// `flopwise diff A B [options]`: argv[0] is "diff". Returns the exit code; throws flopwise::Error.
int run_diff(int argc, char** argv);
// `flopwise check MODEL --budget FILE [options]`: argv[0] is "check".
int run_check(int argc, char** argv);
// `flopwise run MODEL.pt [options]`: argv[0] is "run".
int run_run(int argc, char** argv);

}  // namespace flopwise
