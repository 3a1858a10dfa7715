#include "option_names.hpp"

#include <string_view>
#include <utility>

namespace mimorx::cli {

std::string with_option_names(const std::string& message) {
  // Library field -> the option of `sim` (and `ldpc ber`) that sets it.
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"code_rate", "rate"},
      {"blocks", "max-blocks"},
      {"frames", "max-frames"},
      {"alpha_last", "alpha-last"},
      {"max_iters", "iters"},
      {"min_bit_errors", "min-errors"},
      {"min_block_errors", "min-errors"},
      {"batch_blocks", "batch"},
      {"vectors_per_channel", "vectors-per-channel"},
      {"corr_tx", "corr-tx"},
      {"corr_rx", "corr-rx"},
      {"n_prb", "prb"},
      {"n_rx", "nrx"},
      {"max_slots", "slots"},
      {"mcs_table", "mcs-table"},
      {"additional_position", "dmrs-add-pos"},
  };
  const auto colon = message.find(": ");
  if (colon == std::string::npos) return message;
  const std::string_view field(message.data(), colon);
  for (const auto& [from, to] : kNames) {
    if (field == from) return std::string(to) + message.substr(colon);
  }
  return message;
}

}  // namespace mimorx::cli
