#pragma once
// The interface the list detectors share (N-way, K-best, trellis: nway.hpp, kbest.hpp,
// trellis.hpp). Each builds a list of candidate vectors per received vector from a QR of the
// channel and merges it into max-log LLRs,
//   LLR(b) = clip((min_{list, b=1} d - min_{list, b=0} d) / N0),  positive = bit 0,
// in two steps that can also be run (and timed) apart: qr(), then search().
#include <cstdint>
#include <memory>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/detect/common.hpp"

namespace mimorx::detect {

namespace detail {
class ListSearch;  // a detector's QR and search (src/detect/common_list.hpp)
}

class ListDetectorPlan {
 public:
  ListDetectorPlan(ListDetectorPlan&&) noexcept;
  ListDetectorPlan& operator=(ListDetectorPlan&&) noexcept;

  // bits: V * nt * m hard decisions (0/1); llrs: V * nt * m LLRs, or empty for hard output
  // only. Layout as in detect/common.hpp. Inputs and outputs on the plan's backend memory.
  void run(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
           const Stream& stream = Stream{});

  // The same work in two steps, for timing: qr() factors every channel (and rotates every y)
  // into the plan's workspace, search() runs the tree search and the LLR merge on it. These
  // check shapes and residency but do not scan device inputs for NaN/Inf (run() does).
  void qr(const DetectInput& in, const Stream& stream = Stream{});
  void search(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
              const Stream& stream = Stream{});
  // After qr(): the candidate lists, for tests. distances: V * candidates_per_vector() values
  // d (the part of ||y - H x||^2 inside the span of H); symbols: nt constellation indices (as
  // modulation.hpp numbers them) per candidate, in transmit-stream order. Each detector's
  // header says how the candidates of a vector are ordered.
  void candidates(const DetectInput& in, View<float> distances, View<std::uint8_t> symbols,
                  const Stream& stream = Stream{});

  const Backend& backend() const;
  std::int64_t candidates_per_vector() const;

 protected:
  explicit ListDetectorPlan(std::unique_ptr<detail::ListSearch> search);
  ~ListDetectorPlan();  // not deleted through this base
  const detail::ListSearch& list_search() const;

 private:
  std::unique_ptr<detail::ListSearch> search_;
};

}  // namespace mimorx::detect
