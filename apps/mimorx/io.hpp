#pragma once
// Input and output of the subcommands, checked at every step: a file that cannot be read is an
// error naming it, and a run whose output was not written fails (exit status 2) instead of
// ending with status 0.
#include <string>

namespace mimorx::cli {

// The whole content of `path` ("-": stdin). Throws InvalidArgument "<option>: cannot read
// '<path>': <reason>" for a missing or unreadable file or a directory.
std::string read_input(const std::string& path, const std::string& option);

// Writes `text` to `path` so that a reader never sees a partial file: a regular file (or a new
// one) is written to `path`.tmp, which is then renamed over `path`; anything else (a device such
// as /dev/null or /dev/full, a pipe) is written in place. Every step is checked; a failure
// throws InvalidArgument "<option>: cannot write '<path>': <reason>".
void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& option);

// Writes `text` to stdout and flushes it; throws InvalidArgument "stdout: cannot write: <reason>"
// when stdout does not take it (a full disk, a closed pipe).
void write_stdout(const std::string& text);
// Flushes stdout (C stdio and std::cout); throws as write_stdout when an earlier write failed.
void flush_stdout();

// `text` to stdout ("-") or atomically to the file `path`.
void write_output(const std::string& path, const std::string& text, const std::string& option);

}  // namespace mimorx::cli
