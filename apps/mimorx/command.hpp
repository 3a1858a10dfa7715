#pragma once
// Each subcommand lives in its own file and registers itself here, so adding one touches no
// other file. A subcommand's callback throws mimorx::Error on bad input; main() turns that into
// one line on stderr and exit status 2.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace mimorx::cli {

struct Command {
  std::string name;
  std::function<void(CLI::App& parent)> add;  // adds the subcommand and its callback
};

std::vector<Command>& commands();
// The command line as the user typed it (arguments shell-quoted where needed), recorded in the
// outputs so that a result can be traced back to how it was made. Set once by main().
const std::string& command_line();
void set_command_line(int argc, const char* const* argv);

// Thrown by a command that has reported its failure itself: main() exits with `status` and
// prints nothing.
struct ExitQuietly {
  int status = 2;
};

inline int register_command(std::string name, std::function<void(CLI::App&)> add) {
  commands().push_back({std::move(name), std::move(add)});
  return 0;
}

}  // namespace mimorx::cli

#define MIMORX_REGISTER_COMMAND(id, fn) \
  [[maybe_unused]] static const int mimorx_command_##id = ::mimorx::cli::register_command(#id, fn)
