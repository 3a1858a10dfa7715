#include "sim/point_json.hpp"

namespace mimorx::sim {

nlohmann::ordered_json uncoded_point_json(const std::string& detector, const PointResult& r) {
  nlohmann::ordered_json p = {{"detector", detector}, {"snr_db", r.snr_db},
                              {"ebn0_db", r.ebn0_db}, {"ber", r.ber()},
                              {"ser", r.ser()},       {"bit_errors", r.bit_errors},
                              {"bits", r.bits},       {"symbol_errors", r.symbol_errors},
                              {"symbols", r.symbols}, {"frames", r.frames},
                              {"seconds", r.seconds}};
  if (r.capped_vectors) p["capped_vectors"] = r.capped_vectors;
  return p;
}

nlohmann::ordered_json coded_point_json(const std::string& detector, const CodedPointResult& r,
                                        bool has_crc) {
  using json = nlohmann::ordered_json;
  return {{"detector", detector},
          {"snr_db", r.snr_db},
          {"ebn0_db", r.ebn0_db},
          {"ber", r.ber()},
          {"bler", r.bler()},
          {"bit_errors", r.bit_errors},
          {"bits", r.bits},
          {"block_errors", r.block_errors},
          {"blocks", r.blocks},
          {"crc_failures", has_crc ? json(r.crc_failures) : json(nullptr)},
          {"undetected_errors", has_crc ? json(r.undetected_errors) : json(nullptr)},
          {"seconds", r.seconds}};
}

}  // namespace mimorx::sim
