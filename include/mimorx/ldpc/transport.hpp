#pragma once
// One LDPC transport-block chain of TS 38.212 §7.2 (PDSCH; §6.2 PUSCH is the same):
//   TB CRC (§7.2.1) -> base graph (§7.2.2) -> segmentation + CB CRC (§5.2.2) -> encode (§5.3.2,
//   all code blocks in one batch) -> rate matching + interleaving (§5.4.2) -> concatenation (§5.5)
// and the receiver: de-concatenate -> de-interleave / rate recovery into a HARQ buffer (soft
// combining across rvs) -> decode (DecoderPlan) -> CB CRC -> TB CRC.
//
// Limits (checked, InvalidArgument otherwise): tbs in 1..kMaxTbs and a TS 38.214 size when
// C > 1 (see segment()); code_rate in [0.1, 0.95] (0.95 is the highest rate of the 38.214 MCS
// tables; below the mother rates 1/3 (BG1) and 1/5 (BG2) the circular buffer repeats bits);
// rv 0..3; layers 1..4.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "mimorx/core/backend.hpp"
#include "mimorx/ldpc/decoder.hpp"
#include "mimorx/ldpc/encoder.hpp"
#include "mimorx/ldpc/rate_match.hpp"
#include "mimorx/ldpc/segmentation.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::ldpc {

struct TransportConfig {
  int tbs = 0;             // A, information bits
  double code_rate = 0.5;  // target R, selects the base graph and (with g = 0) G
  Modulation mod = Modulation::qpsk;
  int layers = 1;
  int rv = 0;                 // default redundancy version of encode()/decode()
  bool lbrm = false;          // limited-buffer rate matching
  std::int64_t tbs_lbrm = 0;  // TBS_LBRM; 0 = tbs
  // Coded bits G; 0 derives G = smallest multiple of layers x Qm >= B' / code_rate.
  std::int64_t g = 0;
  DecoderSettings decoder{};  // the receiver side's decoder (DecoderConfig::with)
};

struct TransportDecodeResult {
  bool tb_crc_ok = false;
  std::vector<std::uint8_t> cb_crc_ok;  // per code block (1 also when C = 1 and no CB CRC)
  std::vector<int> iterations;          // per code block
};

class TransportPlan {
 public:
  TransportPlan(const TransportConfig& cfg, Backend backend);
  ~TransportPlan();
  TransportPlan(TransportPlan&&) noexcept;
  TransportPlan& operator=(TransportPlan&&) noexcept;

  const TransportConfig& config() const;
  const Segmentation& segmentation() const;
  std::int64_t g() const;             // coded bits
  const std::vector<int>& e() const;  // E per code block
  int ncb() const;
  int n() const;  // full mother codeword length per block (68 Zc or 52 Zc) = HARQ buffer stride
  std::size_t harq_size() const;  // C x n()

  // tb: tbs bits (host, 0/1). out: g() coded bits (host). rv < 0 uses config().rv.
  void encode(std::span<const std::uint8_t> tb, std::span<std::uint8_t> out, int rv = -1) const;
  // Soft-combines one transmission of g() LLRs (positive = bit 0) into harq (harq_size()
  // floats, zero before the first transmission).
  void accumulate(std::span<const float> llrs, std::span<float> harq, int rv = -1) const;
  // Base rows of the code that one transmission with redundancy version rv reaches: the rows up
  // to the last one whose degree-1 parity column carries a sent bit (at least the 4 core rows).
  // The rows beyond have only unsent parity bits (LLR 0), so min-sum messages from them are 0:
  // decode() decodes these rows only, which gives the bits of decoding them all (without early
  // termination; with it, the syndrome is that of the decoded rows).
  int decoded_rows(int rv = -1) const;
  // Decodes a HARQ buffer (every base row) into tb (tbs bits); tb is written even when the CRCs
  // fail.
  TransportDecodeResult decode_harq(std::span<const float> harq, std::span<std::uint8_t> tb) const;
  // One transmission: accumulate into a fresh buffer, then decode its decoded_rows(rv).
  TransportDecodeResult decode(std::span<const float> llrs, std::span<std::uint8_t> tb,
                               int rv = -1) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mimorx::ldpc
