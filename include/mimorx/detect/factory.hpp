#pragma once
// Every MIMO detector of mimorx behind one interface, chosen by one string: "zf", "mmse", "ml",
// "psd", "psd:LANES", "sts", "sts:CLIP", "nway:N", "kbest:K", "trellis", "lr-zf", "lr-mmse",
// "lr-mmse-sic". The simulator, the CLI and library users pick detectors through it.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/detect/common.hpp"

namespace mimorx::detect {

class Detector {
 public:
  virtual ~Detector() = default;
  // bits: V * nt * m hard decisions; llrs: V * nt * m max-log LLRs when soft (may be empty
  // otherwise). Layout as in detect/common.hpp. On CUDA, asynchronous on `stream` unless the
  // detector checks device values (DetectorOptions).
  void run(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
           const Stream& stream = {}) {
    run_on(in, bits, llrs, stream);
  }
  virtual bool soft() const = 0;  // writes LLRs
  // Vectors so far whose search a work cap stopped early (psd's node budget, counted on the
  // CPU): their decisions are the best found, not guaranteed exact ML.
  virtual std::int64_t capped_vectors() const { return 0; }
  const std::string& name() const { return name_; }

 protected:
  explicit Detector(std::string name) : name_(std::move(name)) {}
  virtual void run_on(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                      const Stream& stream) = 0;

 private:
  std::string name_;
};

// psd's node budget per received vector (SphereConfig::node_cap): exact ML costs time
// exponential in nt at low SNR (8x8 16-QAM at -50 dB took 46 s per vector without a cap); a
// vector that reaches the budget keeps the best leaf found and is counted in capped_vectors().
// 4x4 16-QAM's whole tree has fewer nodes, so a cap never changes results there.
inline constexpr std::int64_t kPsdNodeCap = 1000000;

struct DetectorOptions {
  bool soft = false;                        // write max-log LLRs (the detector must give them)
  std::int64_t psd_node_cap = kPsdNodeCap;  // 0: no cap (exact ML, whatever it costs)
  // Scan device inputs for NaN/Inf before each call (a kernel and a synchronisation); off
  // where the inputs are generated (the simulator), so that calls stay asynchronous.
  bool check_device_values = true;
};

// Throws InvalidArgument naming the spec and the detectors this build has.
std::unique_ptr<Detector> make_detector(const std::string& spec, const MimoShape& shape,
                                        const Backend& backend, const DetectorOptions& options);
std::unique_ptr<Detector> make_detector(const std::string& spec, const MimoShape& shape,
                                        const Backend& backend, bool soft);
// The detector names this build offers (for --help and error messages).
std::vector<std::string> detector_names();

}  // namespace mimorx::detect
