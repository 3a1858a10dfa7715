#pragma once
// The result files of `mimorx sim` (--json, --csv): rewritten whole after every point so that an
// interrupted run keeps every finished point and never leaves a truncated file.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mimorx::cli {

using ojson = nlohmann::ordered_json;

// The points as CSV: a header line of `columns`, then one line per point (a field a point lacks
// is left empty; strings are quoted when they need it).
std::string csv_of(const std::vector<std::string>& columns, const ojson& points);

// The --json and --csv files of one run (either path may be empty: not written).
class ResultFiles {
 public:
  ResultFiles(std::string json_path, std::string csv_path, std::vector<std::string> csv_columns);
  void write(const ojson& document) const;  // the whole document; its "points" for the CSV

 private:
  std::string json_path_, csv_path_;
  std::vector<std::string> csv_columns_;
};

}  // namespace mimorx::cli
