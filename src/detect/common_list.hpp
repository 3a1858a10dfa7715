#pragma once
// What the list detectors' plans (NwayPlan, KbestPlan, TrellisPlan) share behind
// ListDetectorPlan (mimorx/detect/list_plan.hpp): the output checks and the run/qr/search/
// candidates sequence live here, each detector implements its QR and search.
#include <cstdint>
#include <string>
#include <type_traits>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/detect/common.hpp"

namespace mimorx::detect::detail {

class ListSearch {
 public:
  // per_vector: candidates per received vector that search() writes in place of bits/LLRs.
  ListSearch(const MimoShape& shape, Backend backend, bool check_device_values,
             std::int64_t per_vector);
  virtual ~ListSearch();

  // The QR of every vector of `in` into the plan's workspace.
  virtual void qr(const DetectInput& in, const Stream& s) = 0;
  // The search on that workspace: hard bits and LLRs (llrs.size == 0: hard output only), or,
  // with cand_d set, the candidate lists (distances, symbols) instead.
  virtual void search(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
                      float* cand_d, std::uint8_t* cand_sym, const Stream& s) = 0;

  // bits: V * nbits, llrs: V * nbits or empty, both in the backend's memory.
  void check_outputs(std::int64_t v, View<std::uint8_t> bits, View<float> llrs) const;

  const MimoShape shape;
  const Backend backend;
  const bool check_device_values;
  const std::int64_t per_vector;
  const int nbits;  // bits per received vector, nt * m
};

// Output checks of a soft-output detector: bits V * nbits, llrs V * nbits or empty (hard
// output only), both in the backend's memory.
void check_soft_outputs(const Backend& backend, std::int64_t v, int nbits, View<std::uint8_t> bits,
                        View<float> llrs);

// The config checks the list detectors share, naming `detector` ("the N-way detector"):
// nt in {2, 4, 8}, nt <= nr <= 64, a square QAM (two independent PAM axes: no BPSK) and a
// finite llr_clip > 0.
void validate_list_config(const MimoShape& s, float llr_clip, const std::string& detector);

// f(nt, levels) with both as std::integral_constant: nt in {2, 4, 8}, levels in {2, 4, 8, 16}
// (PAM levels per axis).
template <class F>
void dispatch_nt_levels(int nt, int levels, F&& f) {
  auto with_l = [&](auto nt_c) {
    switch (levels) {
      case 2:
        return f(nt_c, std::integral_constant<int, 2>{});
      case 4:
        return f(nt_c, std::integral_constant<int, 4>{});
      case 8:
        return f(nt_c, std::integral_constant<int, 8>{});
      case 16:
        return f(nt_c, std::integral_constant<int, 16>{});
    }
    throw Unsupported("levels: " + std::to_string(levels));
  };
  switch (nt) {
    case 2:
      return with_l(std::integral_constant<int, 2>{});
    case 4:
      return with_l(std::integral_constant<int, 4>{});
    case 8:
      return with_l(std::integral_constant<int, 8>{});
  }
  throw Unsupported("nt: " + std::to_string(nt));
}

}  // namespace mimorx::detect::detail
