#pragma once
// The JSON object of one simulated point, as the CLI's curves (`mimorx sim`, `mimorx ldpc ber`)
// and the Python package (mimorx.sim) report it: its fields and their order, written once.
#include <nlohmann/json.hpp>
#include <string>

#include "mimorx/sim/coded.hpp"
#include "mimorx/sim/link.hpp"

namespace mimorx::sim {

// capped_vectors is present only where a work cap stopped some searches (so it is no CSV
// column).
nlohmann::ordered_json uncoded_point_json(const std::string& detector, const PointResult& r);
// has_crc false (no transport-block CRC): crc_failures and undetected_errors are null.
nlohmann::ordered_json coded_point_json(const std::string& detector, const CodedPointResult& r,
                                        bool has_crc);

}  // namespace mimorx::sim
