#include "sim_files.hpp"

#include "io.hpp"

namespace mimorx::cli {

namespace {

std::string csv_field(const ojson& v) {
  if (v.is_null()) return "";
  // A list (sim --nr's bler_tx) is one quoted field: its commas would split it.
  if (v.is_number() || v.is_boolean()) return v.dump();
  const auto s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

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
