#include "sim_files.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "mimorx/core/error.hpp"

namespace mimorx::cli {

namespace {

[[noreturn]] void write_failed(const std::string& option, const std::string& path, int err) {
  throw InvalidArgument(option + ": cannot write '" + path +
                        "': " + (err > 0 ? std::strerror(err) : "write failed"));
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

std::string csv_field(const ojson& v) {
  if (v.is_null()) return "";
  if (!v.is_string()) return v.dump();
  const auto s = v.get<std::string>();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

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

std::string csv_of(const std::vector<std::string>& columns, const ojson& points) {
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i) out += ',';
    out += columns[i];
  }
  out += '\n';
  for (const auto& p : points) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const auto it = p.find(columns[i]);
      if (i) out += ',';
      if (it != p.end()) out += csv_field(*it);
    }
    out += '\n';
  }
  return out;
}

ResultFiles::ResultFiles(std::string json_path, std::string csv_path,
                         std::vector<std::string> csv_columns)
    : json_path_(std::move(json_path)),
      csv_path_(std::move(csv_path)),
      csv_columns_(std::move(csv_columns)) {}

void ResultFiles::write(const ojson& document) const {
  if (!json_path_.empty()) write_file_atomically(json_path_, document.dump(2) + "\n", "json");
  if (!csv_path_.empty())
    write_file_atomically(csv_path_, csv_of(csv_columns_, document["points"]), "csv");
}

}  // namespace mimorx::cli
