#pragma once
// The library's argument errors under the names of the `sim` / `ldpc` options that set
// those arguments: "code_rate: ..." reads "rate: ...", "n_prb: ..." reads "prb: ...".
#include <string>

#include "mimorx/core/error.hpp"

namespace mimorx::cli {

// `message` with a leading "<library field>:" replaced by the option's name; others unchanged.
std::string with_option_names(const std::string& message);

// Runs f; an InvalidArgument leaving it names the option instead of the library field.
template <class F>
decltype(auto) naming_options(F&& f) {
  try {
    return f();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(with_option_names(e.what()));
  }
}

}  // namespace mimorx::cli
