#pragma once
// Every MIMO detector of mimorx behind one interface, chosen by name, for the simulator and
// the CLI: "zf", "mmse", "ml", "psd", "nway:N", "kbest:K", "lr-zf", "lr-mmse", "lr-mmse-sic".
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mimorx/detect/common.hpp"

namespace mimorx::sim {

class Detector {
 public:
  virtual ~Detector() = default;
  // bits: V * nt * m hard decisions; llrs: V * nt * m max-log LLRs when soft (may be empty
  // otherwise). Layout as in detect/common.hpp.
  virtual void run(const detect::DetectInput& in, View<std::uint8_t> bits, View<float> llrs) = 0;
  virtual bool soft() const = 0;  // writes LLRs
  const std::string& name() const { return name_; }

 protected:
  explicit Detector(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

// Throws InvalidArgument naming the spec and the detectors this build has.
std::unique_ptr<Detector> make_detector(const std::string& spec, const detect::MimoShape& shape,
                                        const Backend& backend, bool soft);
// The detector names this build offers (for --help and error messages).
std::vector<std::string> detector_names();

}  // namespace mimorx::sim
