#include "io.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>

#include "mimorx/core/error.hpp"

namespace mimorx::cli {

namespace {

std::string reason(int err, const char* otherwise) {
  return err > 0 ? std::strerror(err) : otherwise;
}

[[noreturn]] void write_failed(const std::string& option, const std::string& path, int err) {
  throw InvalidArgument(option + ": cannot write '" + path + "': " + reason(err, "write failed"));
}

// Opens, writes, flushes and closes, checking each step (the error of a full disk shows at the
// flush or the close, not at the write). Returns 0 or an errno value (-1 when none is known).
int write_whole(const std::string& path, const std::string& text) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return errno ? errno : -1;
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool flushed = written && std::fflush(f) == 0;
  int err = errno;
  const bool closed = std::fclose(f) == 0;
  if (!err) err = errno;
  return written && flushed && closed ? 0 : (err ? err : -1);
}

bool is_special_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string read_stream(std::FILE* f, const std::string& option, const std::string& path) {
  std::string out;
  char buf[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, got);
  require(!std::ferror(f), option, "cannot read '" + path + "': " + reason(errno, "read failed"));
  return out;
}

}  // namespace

std::string read_input(const std::string& path, const std::string& option) {
  if (path == "-") return read_stream(stdin, option, "stdin");
  require(!is_directory(path), option,
          "'" + path + "' is a directory; give a file ('-' for stdin)");
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  require(f != nullptr, option, "cannot open '" + path + "': " + reason(errno, "open failed"));
  try {
    std::string text = read_stream(f, option, path);
    std::fclose(f);
    return text;
  } catch (...) {
    std::fclose(f);
    throw;
  }
}

void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& option) {
  if (is_special_file(path)) {
    if (const int err = write_whole(path, text)) write_failed(option, path, err);
    return;
  }
  const std::string tmp = path + ".tmp";
  int err = write_whole(tmp, text);
  if (!err && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno ? errno : -1;
  if (err) {
    std::remove(tmp.c_str());
    write_failed(option, path, err);
  }
}

void flush_stdout() {
  errno = 0;
  std::cout.flush();
  const bool ok = std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good();
  if (!ok) throw InvalidArgument("stdout: cannot write: " + reason(errno, "write failed"));
}

void write_stdout(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  flush_stdout();
}

void write_output(const std::string& path, const std::string& text, const std::string& option) {
  if (path == "-") {
    write_stdout(text);
  } else {
    write_file_atomically(path, text, option);
  }
}

}  // namespace mimorx::cli
