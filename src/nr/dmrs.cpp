// TS 38.211 V17.x Tables 6.4.1.1.3-1/-2/-3 and 7.4.1.1.2-1/-2/-3 (single-symbol, type A).
#include "mimorx/nr/dmrs.hpp"

#include <cmath>
#include <string>

#include "mimorx/core/error.hpp"
#include "mimorx/nr/gold.hpp"

namespace mimorx::nr {
namespace {

// Table 6.4.1.1.3-1 / 7.4.1.1.2-1 (configuration type 1).
constexpr DmrsPort kType1[8] = {{0, 0, {+1, +1}, {+1, +1}}, {0, 0, {+1, -1}, {+1, +1}},
                                {1, 1, {+1, +1}, {+1, +1}}, {1, 1, {+1, -1}, {+1, +1}},
                                {0, 0, {+1, +1}, {+1, -1}}, {0, 0, {+1, -1}, {+1, -1}},
                                {1, 1, {+1, +1}, {+1, -1}}, {1, 1, {+1, -1}, {+1, -1}}};
// Table 6.4.1.1.3-2 / 7.4.1.1.2-2 (configuration type 2).
constexpr DmrsPort kType2[12] = {
    {0, 0, {+1, +1}, {+1, +1}}, {0, 0, {+1, -1}, {+1, +1}}, {1, 2, {+1, +1}, {+1, +1}},
    {1, 2, {+1, -1}, {+1, +1}}, {2, 4, {+1, +1}, {+1, +1}}, {2, 4, {+1, -1}, {+1, +1}},
    {0, 0, {+1, +1}, {+1, -1}}, {0, 0, {+1, -1}, {+1, -1}}, {1, 2, {+1, +1}, {+1, -1}},
    {1, 2, {+1, -1}, {+1, -1}}, {2, 4, {+1, +1}, {+1, -1}}, {2, 4, {+1, -1}, {+1, -1}}};

}  // namespace

DmrsPort dmrs_port(DmrsType type, int port) {
  const bool t1 = type == DmrsType::type1;
  require(t1 || type == DmrsType::type2, "dmrs_type", "must be 1 or 2");
  const int ports = t1 ? 8 : 12;
  require(port >= 0 && port < ports, "port",
          std::to_string(port) + "; allowed 0.." + std::to_string(ports - 1) + " for DM-RS type " +
              (t1 ? "1" : "2"));
  return t1 ? kType1[port] : kType2[port];
}

int dmrs_cdm_groups(DmrsType type) { return type == DmrsType::type1 ? 2 : 3; }

int dmrs_re_per_group(DmrsType type) { return type == DmrsType::type1 ? 6 : 4; }

bool in_cdm_group(DmrsType type, int group, int k) {
  if (type == DmrsType::type1) return k % 2 == group;
  return k % 6 / 2 == group;
}

std::vector<int> dmrs_symbols(SharedChannel channel, int type_a_position, int additional_position,
                              int l_d) {
  require(type_a_position == 2 || type_a_position == 3, "type_a_position",
          std::to_string(type_a_position) + "; allowed 2 or 3");
  require(additional_position >= 0 && additional_position <= 3, "additional_position",
          std::to_string(additional_position) + "; allowed 0..3");
  const bool pusch = channel == SharedChannel::pusch;
  const int min_ld = pusch ? 4 : 3;
  require(l_d >= min_ld && l_d <= 14, "duration",
          "l_d = " + std::to_string(l_d) + " symbols from the slot start; " +
              (pusch ? "PUSCH" : "PDSCH") + " mapping type A allows " + std::to_string(min_ld) +
              "..14");
  const int l0 = type_a_position;
  const int pos = additional_position;
  // Rows l_d < 8 and column pos0 hold l0 alone; rows 8-9: l0, 7; rows 10-12: l0, 9 | l0, 6, 9,
  // except row 12 pos3: l0, 5, 8, 11; rows 13-14: l0, 11 | l0, 7, 11 | l0, 5, 8, 11 (l1 = 11 for
  // PDSCH: no LTE CRS rate matching).
  if (l_d < 8 || pos == 0) return {l0};
  if (l_d < 10) return {l0, 7};
  if (l_d < 12 || (l_d == 12 && pos < 3)) {
    if (pos == 1) return {l0, 9};
    return {l0, 6, 9};
  }
  if (l_d == 12 || pos == 3) return {l0, 5, 8, 11};
  if (pos == 1) return {l0, 11};
  return {l0, 7, 11};
}

std::uint32_t dmrs_c_init(int slot, int symbol, int n_id, int n_scid) {
  require(slot >= 0 && slot < 160, "slot", std::to_string(slot) + "; allowed 0..159");
  require(symbol >= 0 && symbol < 14, "symbol", std::to_string(symbol) + "; allowed 0..13");
  require(n_id >= 0 && n_id <= 65535, "n_id", std::to_string(n_id) + "; allowed 0..65535");
  require(n_scid == 0 || n_scid == 1, "n_scid", std::to_string(n_scid) + "; allowed 0 or 1");
  const std::uint64_t a = std::uint64_t(14 * slot + symbol + 1) * std::uint64_t(2 * n_id + 1);
  const std::uint64_t c = (a << 17) + 2 * std::uint64_t(n_id) + std::uint64_t(n_scid);
  return static_cast<std::uint32_t>(c % (std::uint64_t(1) << 31));
}

std::vector<cf32> dmrs_sequence(std::uint32_t c_init, int length) {
  require(length >= 0, "length", std::to_string(length) + "; must be >= 0");
  const std::vector<std::uint8_t> c = gold_sequence(c_init, 2 * length);
  const float a = float(1.0 / std::sqrt(2.0));
  std::vector<cf32> r(static_cast<std::size_t>(length));
  for (std::size_t m = 0; m < r.size(); ++m) {
    r[m] = cf32(c[2 * m] ? -a : a, c[2 * m + 1] ? -a : a);
  }
  return r;
}

}  // namespace mimorx::nr
