// mimorx: GPU-accelerated MIMO receiver processing from the command line.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "command.hpp"
#include "io.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"
#include "options.hpp"

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

namespace {

// Adds check_integer to every integer option of `app` and of its subcommands.
void check_integers(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    if (type == "INT") opt->check(CLI::Validator(mimorx::cli::check_integer<std::int64_t>, "", ""));
    if (type == "UINT")
      opt->check(CLI::Validator(mimorx::cli::check_integer<std::uint64_t>, "", ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) check_integers(*sub);
}

// `mimorx foo`: CLI11 would say only that a subcommand is required.
void check_command(int argc, char** argv, const std::vector<mimorx::cli::Command>& cmds) {
  if (argc < 2 || argv[1][0] == '-') return;
  const std::string word = argv[1];
  const bool known = std::any_of(cmds.begin(), cmds.end(), [&](auto& c) { return c.name == word; });
  if (known) return;
  std::string names;
  for (const auto& c : cmds) names += (names.empty() ? "" : ", ") + c.name;
  throw mimorx::InvalidArgument("unknown command '" + word + "'; the commands are " + names);
}

// Under an MPI launcher every rank parses the same command line: what fails before the ranks
// work together (a bad option) is reported by rank 0 alone.
bool secondary_mpi_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    const char* v = std::getenv(name);
    if (v != nullptr) return std::string_view(v) != "0";
  }
  return false;
}

// Prints the one line of a failed run and returns its exit status.
int fail(int status, std::string_view what, const char* hint = "") {
  if (secondary_mpi_rank()) return status;
  const std::string line =
      std::string(status == 1 ? "mimorx: internal error: " : "mimorx: error: ") +
      mimorx::printable(what) + hint + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mimorx " MIMORX_VERSION
               ": MIMO detection, lattice reduction and 5G NR LDPC on CPU and CUDA"};
  mimorx::cli::set_command_line(argc, argv);
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("mimorx ") + MIMORX_VERSION);
  auto& cmds = mimorx::cli::commands();
  std::sort(cmds.begin(), cmds.end(), [](auto& a, auto& b) { return a.name < b.name; });
  for (auto& c : cmds) c.add(app);
  check_integers(app);
  try {
    check_command(argc, argv, cmds);
    app.parse(argc, argv);
    mimorx::cli::flush_stdout();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const mimorx::cli::ExitQuietly& e) {
    return e.status;
  } catch (const CLI::ParseError& e) {
    return fail(2, e.what(), " (see --help)");
  } catch (const mimorx::Error& e) {
    return fail(2, e.what());
  } catch (const std::bad_alloc&) {
    return fail(2, "out of memory; give smaller sizes (docs/cli.md, Limits)");
  } catch (const std::exception& e) {
    return fail(1, e.what());
  }
  return 0;
}
