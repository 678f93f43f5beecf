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
  } catch (const CLI::ParseError& e) {
    const std::string name = command.empty() ? "flopwise" : "flopwise " + command;
    print_error(name + ": error: ", "UsageError", std::string(e.what()) + " (see " + name + " --help)");
    return kExitBadInput;
  }
  return std::nullopt;
}

}  // namespace flopwise
