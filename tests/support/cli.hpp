#pragma once
// Runs the built `mimorx` binary for CLI tests and captures its exit status and output.
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace mimorx::test {

struct CliResult {
  int status = -1;
  std::string out;  // stdout and stderr together
};

inline CliResult run_cli(const std::string& args) {
  CliResult r;
#ifdef MIMORX_CLI_PATH
  const std::string cmd = std::string(MIMORX_CLI_PATH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), int(buf.size()), p)) r.out += buf.data();
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
#else
  (void)args;
#endif
  return r;
}

}  // namespace mimorx::test
