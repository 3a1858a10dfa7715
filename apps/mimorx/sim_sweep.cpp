#include "sim_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "mimorx/core/error.hpp"

namespace mimorx::cli {

namespace {

constexpr double kSnrTolerance = 1e-9;

std::string detector_of(const ojson& point) {
  const auto it = point.find("detector");
  return it != point.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

SweepPoints::SweepPoints(std::vector<std::string> detectors, std::vector<double> snrs)
    : detectors_(std::move(detectors)), snrs_(std::move(snrs)) {}

void SweepPoints::put(std::size_t detector, std::size_t snr, ojson point) {
  points_[{detector, snr}] = std::move(point);
}

std::vector<std::size_t> SweepPoints::missing(std::size_t detector, const std::string& error_key,
                                              bool early_stop) const {
  std::vector<std::size_t> out;
  for (std::size_t s = 0; s < snrs_.size(); ++s) {
    const auto it = points_.find({detector, s});
    if (it == points_.end()) {
      out.push_back(s);
    } else if (early_stop && it->second.value(error_key, std::int64_t(-1)) == 0) {
      break;
    }
  }
  return out;
}

void SweepPoints::import(const ojson& points) {
  for (const auto& p : points) {
    const auto d = std::size_t(std::find(detectors_.begin(), detectors_.end(), detector_of(p)) -
                               detectors_.begin());
    const double snr = p.value("snr_db", NAN);
    std::size_t s = 0;
    if (d < detectors_.size()) {
      while (s < snrs_.size() &&
             (std::abs(snrs_[s] - snr) > kSnrTolerance || points_.count({d, s})))
        ++s;
    }
    if (d < detectors_.size() && s < snrs_.size()) {
      put(d, s, p);
    } else {
      others_.push_back(p);
    }
  }
}

ojson SweepPoints::ordered() const {
  ojson out = ojson::array();
  for (const auto& [key, p] : points_) out.push_back(p);
  for (const auto& p : others_) out.push_back(p);
  return out;
}

std::size_t SweepPoints::position(std::size_t detector, std::size_t snr) const {
  return std::size_t(std::distance(points_.begin(), points_.find({detector, snr})));
}

std::vector<std::string> SweepPoints::all_detectors() const {
  auto out = detectors_;
  for (const auto& p : others_) {
    const auto d = detector_of(p);
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  return out;
}

ojson read_resume_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) return nullptr;
  ojson doc = ojson::parse(f, nullptr, /*allow_exceptions=*/false);
  const bool ok = doc.is_object() && doc.contains("config") && doc["config"].is_object() &&
                  doc.contains("points") && doc["points"].is_array() &&
                  std::all_of(doc["points"].begin(), doc["points"].end(), [](const ojson& p) {
                    return p.is_object() && p.contains("detector") && p["detector"].is_string() &&
                           p.contains("snr_db") && p["snr_db"].is_number();
                  });
  require(ok, "resume",
          "'" + path +
              "' is not the JSON of mimorx sim --json (config, and points with detector and "
              "snr_db); give the file of the run to continue, or another --json file");
  return doc;
}

void check_same_config(const ojson& file_config, const ojson& config,
                       const std::vector<std::string>& fields, const std::string& path) {
  for (const auto& key : fields) {
    const auto it = file_config.find(key);
    // A flag a file predates is off in it.
    if (it == file_config.end() && config.at(key) == ojson(false)) continue;
    const std::string theirs = it == file_config.end() ? "nothing" : it->dump();
    require(it != file_config.end() && *it == config.at(key), "resume",
            "'" + path + "' was made with " + key + " = " + theirs + " but this run has " + key +
                " = " + config.at(key).dump() +
                "; only the SNR list, the detectors, the stop rules, the backend and the batch "
                "may change");
  }
}

}  // namespace mimorx::cli
