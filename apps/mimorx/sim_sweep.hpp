#pragma once
// The points of a `mimorx sim` sweep (detector x SNR), those simulated now and those kept from
// the --json file of an earlier run (--resume), in the order the document lists them.
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim_files.hpp"

namespace mimorx::cli {

class SweepPoints {
 public:
  SweepPoints(std::vector<std::string> detectors, std::vector<double> snrs);

  void put(std::size_t detector, std::size_t snr, ojson point);
  // The SNR indices of `detector` still to simulate, in sweep order. With early_stop none after
  // a kept point without errors (`error_key`): the sweep of that detector ended there.
  std::vector<std::size_t> missing(std::size_t detector, const std::string& error_key,
                                   bool early_stop) const;
  // Points of an earlier run: each one of this sweep (same detector, same SNR within 1e-9 dB)
  // takes its place; the others are kept after the sweep's points, in their order.
  void import(const ojson& points);

  // The sweep's points detector by detector, each in SNR order, then the other kept points.
  ojson ordered() const;
  // Where the (present) point (detector, snr) is in ordered().
  std::size_t position(std::size_t detector, std::size_t snr) const;
  // The sweep's detectors, then those of the other kept points.
  std::vector<std::string> all_detectors() const;

 private:
  std::vector<std::string> detectors_;
  std::vector<double> snrs_;
  std::map<std::pair<std::size_t, std::size_t>, ojson> points_;
  ojson others_ = ojson::array();
};

// The document in FILE for --resume, or null when FILE does not exist (nothing to keep).
// Throws InvalidArgument when FILE is not the JSON of `mimorx sim`.
ojson read_resume_file(const std::string& path);

// Throws InvalidArgument naming the first of `fields` in which the configuration of the file
// differs from this run's.
void check_same_config(const ojson& file_config, const ojson& config,
                       const std::vector<std::string>& fields, const std::string& path);

}  // namespace mimorx::cli
