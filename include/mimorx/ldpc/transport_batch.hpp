#pragma once
// The TS 38.212 transport chain of transport.hpp for a batch of transport blocks that share one
// configuration, in the plan's backend memory: every step runs for the whole batch at once (a
// few kernel launches on CUDA, loops parallel over blocks on the CPU) and nothing crosses to the
// host, so a simulator can keep its data on the GPU from the information bits to the counts.
//
//   encode:  TB CRC -> segmentation, CB CRCs, filler -> LDPC encoding of all num x C code blocks
//            in one call -> rate matching and bit interleaving -> concatenation.
//   decode:  de-concatenation, de-interleaving and rate recovery -> decoding of all num x C code
//            blocks in one decoder call -> CB CRCs -> TB CRC -> the tbs information bits.
//
// Every block's bits, LLRs and CRC flags are those of TransportPlan (the single-block chain, the
// reference) for the same configuration: tests/ldpc/test_transport_batch.cpp compares them.
//
// Layouts (unpacked bits are bytes holding 0/1; LLR > 0 means bit 0):
//   tb        num x tbs bits            coded / llrs   num x g()
//   harq      num x harq_size() floats  (C mother codewords of n() LLRs per block)
//   tb_crc_ok num bytes                 cb_crc_ok      num x C bytes (1 when C = 1)
//   iterations num x C ints
// Calls are asynchronous on `stream` for CUDA, except that check_llrs (options) synchronises.
#include <cstdint>
#include <memory>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/ldpc/transport.hpp"

namespace mimorx::ldpc {

struct TransportBatchOptions {
  int max_blocks = 1;  // transport blocks per call at most (sizes the plan's workspace)
  // Reject NaN/Inf receiver LLRs with InvalidArgument. On CUDA the check is a kernel and a
  // synchronisation; turn it off where the LLRs come from a detector (always finite).
  bool check_llrs = true;
};

class TransportBatchPlan {
 public:
  // Throws what TransportPlan throws for the configuration, and InvalidArgument for
  // max_blocks < 1.
  TransportBatchPlan(const TransportConfig& cfg, Backend backend,
                     const TransportBatchOptions& options = {});
  ~TransportBatchPlan();
  TransportBatchPlan(TransportBatchPlan&&) noexcept;
  TransportBatchPlan& operator=(TransportBatchPlan&&) noexcept;

  // The single-block chain of the same configuration (sizes, E per block, segmentation).
  const TransportPlan& chain() const;
  const TransportBatchOptions& options() const;
  const Backend& backend() const;
  int tbs() const;
  std::int64_t g() const;
  int code_blocks() const;  // C
  int n() const;            // mother codeword length (HARQ stride per code block)
  std::size_t harq_size() const;

  // rv < 0 uses the configuration's rv. num in 0..max_blocks.
  void encode(View<const std::uint8_t> tb, int num, View<std::uint8_t> coded, int rv = -1,
              const Stream& stream = {});
  // Soft-combines one transmission into the HARQ buffers (zero them before the first).
  void accumulate(View<const float> llrs, int num, View<float> harq, int rv = -1,
                  const Stream& stream = {});
  // Decodes HARQ buffers. tb is written even when the CRCs fail; cb_crc_ok and iterations may
  // be empty views.
  void decode_harq(View<const float> harq, int num, View<std::uint8_t> tb,
                   View<std::uint8_t> tb_crc_ok, View<std::uint8_t> cb_crc_ok = {},
                   View<int> iterations = {}, const Stream& stream = {});
  // One transmission: rate recovery writes the decoder's input directly (8-bit integers on the
  // integer path), then decodes. Gives what accumulate into zeroed buffers + decode_harq give.
  void decode(View<const float> llrs, int num, View<std::uint8_t> tb, View<std::uint8_t> tb_crc_ok,
              View<std::uint8_t> cb_crc_ok = {}, View<int> iterations = {}, int rv = -1,
              const Stream& stream = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mimorx::ldpc
