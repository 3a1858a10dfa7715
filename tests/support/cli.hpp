#pragma once
// Runs the built `mimorx` binary for CLI tests and captures its exit status and output.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace mimorx::test {

#ifdef MIMORX_CLI_PATH
// The CLI under test: $MIMORX_CLI when set (a build tree carried to another machine, as
// scripts/device-check runs it), else the one this test was built with.
inline std::string cli_path() {
  const char* env = std::getenv("MIMORX_CLI");
  return env && *env ? std::string(env) : std::string(MIMORX_CLI_PATH);
}
#endif

struct CliResult {
  int status = -1;
  std::string out;  // stdout and stderr together
};

// Runs `mimorx <args> <redirect>` through the shell; captures what reaches the pipe.
inline CliResult run_cli_with(const std::string& args, const std::string& redirect) {
  CliResult r;
#ifdef MIMORX_CLI_PATH
  const std::string cmd = cli_path() + " " + args + " " + redirect;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), int(buf.size()), p)) r.out += buf.data();
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
#else
  (void)args;
  (void)redirect;
#endif
  return r;
}

inline CliResult run_cli(const std::string& args) { return run_cli_with(args, "2>&1"); }

// stdout and stderr apart: for the contract "one line on stderr".
struct CliSplit {
  int status = -1;
  std::string out, err;
};

// `args` may redirect stdout itself (e.g. "lll f > /dev/full"); stdin is /dev/null.
inline CliSplit run_cli_split(const std::string& args) {
  char name[] = "/tmp/mimorx_cli_err_XXXXXX";
  const int fd = mkstemp(name);
  if (fd >= 0) close(fd);
  const auto r = run_cli_with(args, std::string("</dev/null 2>") + name);
  std::ifstream f(name);
  CliSplit s{r.status, r.out,
             std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>())};
  std::remove(name);
  return s;
}

}  // namespace mimorx::test
