#include "detect/common_list.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "mimorx/core/error.hpp"
#include "mimorx/detect/list_plan.hpp"

namespace mimorx::detect {

namespace detail {

ListSearch::ListSearch(const MimoShape& s, Backend b, bool check, std::int64_t per_vec)
    : shape(s),
      backend(std::move(b)),
      check_device_values(check),
      per_vector(per_vec),
      nbits(s.bits_per_vector()) {}
ListSearch::~ListSearch() = default;

void ListSearch::check_outputs(std::int64_t v, View<std::uint8_t> bits, View<float> llrs) const {
  check_soft_outputs(backend, v, nbits, bits, llrs);
}

void check_soft_outputs(const Backend& backend, std::int64_t v, int nbits, View<std::uint8_t> bits,
                        View<float> llrs) {
  const Memory mem = memory_of(backend);
  require_size(bits, v * nbits, "bits");
  require_memory(bits.where, mem, "bits");
  require(llrs.size == 0 || llrs.size == v * nbits, "llrs",
          "has " + std::to_string(llrs.size) + " elements, expected " + std::to_string(v * nbits) +
              " (or 0 for hard output only)");
  if (llrs.size) require_memory(llrs.where, mem, "llrs");
}

void validate_list_config(const MimoShape& s, float llr_clip, const std::string& detector) {
  if (!(s.nt == 2 || s.nt == 4 || s.nt == 8)) {
    throw Unsupported("nt: " + std::to_string(s.nt) + " transmit antennas; " + detector +
                      " supports nt = 2, 4 or 8");
  }
  require(s.nr >= s.nt && s.nr <= 64, "nr",
          std::to_string(s.nr) + " receive antennas; the QR-based search of " + detector +
              " needs nt (" + std::to_string(s.nt) + ") <= nr <= 64");
  if (s.mod == Modulation::bpsk) {
    throw Unsupported("mod: bpsk is not supported by " + detector +
                      " (its search slices two independent PAM axes); use qpsk, 16qam, 64qam "
                      "or 256qam");
  }
  require(std::isfinite(llr_clip) && llr_clip > 0.f, "llr_clip",
          std::to_string(llr_clip) + "; must be finite and > 0");
}

}  // namespace detail

ListDetectorPlan::ListDetectorPlan(std::unique_ptr<detail::ListSearch> search)
    : search_(std::move(search)) {}
ListDetectorPlan::~ListDetectorPlan() = default;
ListDetectorPlan::ListDetectorPlan(ListDetectorPlan&&) noexcept = default;
ListDetectorPlan& ListDetectorPlan::operator=(ListDetectorPlan&&) noexcept = default;

void ListDetectorPlan::run(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                           const Stream& stream) {
  validate(in, search_->shape, search_->backend, search_->check_device_values);
  search_->check_outputs(num_vectors(in), bits, llrs);
  search_->qr(in, stream);
  search_->search(in, bits, llrs, nullptr, nullptr, stream);
}

void ListDetectorPlan::qr(const DetectInput& in, const Stream& stream) {
  validate(in, search_->shape, search_->backend, false);
  search_->qr(in, stream);
}

void ListDetectorPlan::search(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                              const Stream& stream) {
  search_->check_outputs(num_vectors(in), bits, llrs);
  search_->search(in, bits, llrs, nullptr, nullptr, stream);
}

void ListDetectorPlan::candidates(const DetectInput& in, View<float> distances,
                                  View<std::uint8_t> symbols, const Stream& stream) {
  const std::int64_t n = num_vectors(in) * search_->per_vector;
  const Memory mem = memory_of(search_->backend);
  require_size(distances, n, "distances");
  require_size(symbols, n * search_->shape.nt, "symbols");
  require_memory(distances.where, mem, "distances");
  require_memory(symbols.where, mem, "symbols");
  search_->search(in, View<std::uint8_t>(), View<float>(), distances.data, symbols.data, stream);
}

const Backend& ListDetectorPlan::backend() const { return search_->backend; }
std::int64_t ListDetectorPlan::candidates_per_vector() const { return search_->per_vector; }
const detail::ListSearch& ListDetectorPlan::list_search() const { return *search_; }

}  // namespace mimorx::detect
