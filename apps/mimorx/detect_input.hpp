#pragma once
// The input file of `mimorx detect` (docs/cli.md), read strictly: integers where integers are
// meant (not "2", 2.5, 1e20 or true), a string modulation, numbers within float32's range, one
// JSON object and nothing after it. Every violation throws InvalidArgument naming the field.
#include <string>

#include "detect_scale.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::cli {

struct DetectRequest {
  DetectNumbers numbers;
  Modulation mod;
};

// `text` is the file's content, `path` its name for the messages.
DetectRequest parse_detect_input(const std::string& text, const std::string& path);

}  // namespace mimorx::cli
