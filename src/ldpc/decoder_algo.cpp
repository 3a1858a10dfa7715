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

}  // namespace mimorx::ldpc
