#include "mimorx/core/error.hpp"
#include "mimorx/ldpc/decoder.hpp"

namespace mimorx::ldpc {

DecoderAlgo parse_decoder_algo(const std::string& name, const std::string& argument) {
  if (name == "bp") return DecoderAlgo::bp;
  if (name == "nms") return DecoderAlgo::nms;
  if (name == "oms") return DecoderAlgo::oms;
  throw InvalidArgument(argument + ": '" + name + "'; allowed bp, nms, oms");
}

}  // namespace mimorx::ldpc
