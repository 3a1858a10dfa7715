#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/decoder.hpp"

namespace mimorx::ldpc {

DecoderAlgo parse_decoder_algo(const std::string& name, const std::string& argument) {
  if (name == "bp") return DecoderAlgo::bp;
  if (name == "nms") return DecoderAlgo::nms;
  if (name == "oms") return DecoderAlgo::oms;
  throw InvalidArgument(argument + ": '" + name + "'; allowed bp, nms, oms");
}

LayerOrder parse_layer_order(const std::string& name, const std::string& argument) {
  if (name == "extension-first") return LayerOrder::extension_first;
  if (name == "natural") return LayerOrder::natural;
  throw InvalidArgument(argument + ": '" + name + "'; allowed extension-first, natural");
}

DecoderArithmetic parse_decoder_arithmetic(const std::string& name, const std::string& argument) {
  if (name == "auto") return DecoderArithmetic::automatic;
  if (name == "single") return DecoderArithmetic::single;
  if (name == "half") return DecoderArithmetic::half;
  throw InvalidArgument(argument + ": '" + name + "'; allowed auto, single, half");
}

}  // namespace mimorx::ldpc
