#pragma once
// The detector factory under the simulator's names (it lives in detect/factory.hpp).
#include "mimorx/detect/factory.hpp"

namespace mimorx::sim {

using detect::Detector;
using detect::detector_names;
using detect::DetectorOptions;
using detect::kPsdNodeCap;
using detect::make_detector;

}  // namespace mimorx::sim
