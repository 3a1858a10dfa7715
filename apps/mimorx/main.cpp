// mimorx: GPU-accelerated MIMO receiver processing from the command line.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "command.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::cli {
std::vector<Command>& commands() {
  static std::vector<Command> list;
  return list;
}

namespace {
std::string& command_line_storage() {
  static std::string line;
  return line;
}

// 'arg' in single quotes unless it is made only of characters a shell leaves alone.
std::string shell_quoted(const std::string& arg) {
  const bool plain = !arg.empty() && arg.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_-+=.,:/@%") == std::string::npos;
  if (plain) return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}
}  // namespace

const std::string& command_line() { return command_line_storage(); }

void set_command_line(int argc, const char* const* argv) {
  std::string line = "mimorx";
  for (int i = 1; i < argc; ++i) line += " " + shell_quoted(argv[i]);
  command_line_storage() = line;
}
}  // namespace mimorx::cli

int main(int argc, char** argv) {
  CLI::App app{"mimorx " MIMORX_VERSION
               ": MIMO detection, lattice reduction and 5G NR LDPC on CPU and CUDA"};
  mimorx::cli::set_command_line(argc, argv);
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("mimorx ") + MIMORX_VERSION);
  auto& cmds = mimorx::cli::commands();
  std::sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return a.name < b.name; });
  for (auto& c : cmds) c.add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "mimorx: error: %s (see --help)\n", e.what());
    return 2;
  } catch (const mimorx::Error& e) {
    std::fprintf(stderr, "mimorx: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mimorx: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
