#pragma once
// One batch of the NR slot link on a backend: blocks [first, first + count) through all their
// transmissions. The CPU step is nr_link.cpp's, the CUDA step nr_link_device.cpp's; both give
// the same per-block results (nr_link_math.hpp, the backends' bit-identical plans).
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/sim/nr_link.hpp"

namespace mimorx::sim::detail {

inline constexpr std::array<int, kMaxHarqTransmissions> kNrRvSequence = {0, 2, 3, 1};

class NrLinkStep {
 public:
  virtual ~NrLinkStep() = default;
  // Per block of the batch: the transmissions it used (1..N), whether it was delivered (TB CRC
  // passed with the sent bits) and whether its TB CRC passed with wrong bits.
  virtual void run(std::int64_t first, std::int64_t count, float n0, std::vector<int>& used,
                   std::vector<std::uint8_t>& delivered, std::vector<std::uint8_t>& undetected) = 0;
};

// The CUDA step (InvalidArgument in a build without CUDA).
std::unique_ptr<NrLinkStep> make_nr_step_cuda(const NrLinkConfig& config, const Backend& backend,
                                              std::int64_t batch);

}  // namespace mimorx::sim::detail
