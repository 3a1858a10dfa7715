#pragma once
// What every MIMO detector takes and gives, so that detectors are interchangeable in the
// simulator and the CLI.
//
// Model: y = H x + n, H is nr x nt complex, x holds nt unit-energy symbols of one modulation,
// n ~ CN(0, N0 I). A batch has C channels and V received vectors; vector v uses channel
// v / vectors_per_channel (coherence blocks of consecutive vectors).
//
// Output layout (hard bits and LLRs alike): vector v, transmit stream t, bit k of that stream's
// symbol at index (v * nt + t) * m + k, with m = bits_per_symbol(mod) and bit k as in
// TS 38.211 (b0 first). Streams in order are consecutive symbols of the transmitted bit
// stream, which is what the LDPC de-rate-matcher reads. LLR > 0 means bit 0.
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/core/tensor.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::detect {

struct MimoShape {
  int nt = 0;
  int nr = 0;
  Modulation mod = Modulation::qpsk;
  int bits_per_vector() const { return nt * bits_per_symbol(mod); }
};

struct DetectInput {
  ConstMatrixBatch<cf32> h;        // C matrices, nr x nt
  ConstMatrixBatch<cf32> y;        // V vectors, nr x 1
  View<const float> noise_var;     // N0 per vector (size V) or one value for all (size 1)
  int vectors_per_channel = 1;     // V == C * vectors_per_channel
};

// Checks shapes, residency (host for Backend::cpu(), device for cuda), that N0 > 0 and finite,
// and, for host inputs, that H and y are finite. Throws InvalidArgument naming the problem.
// Device inputs are checked for NaN/Inf by a kernel when check_device_values is true.
void validate(const DetectInput& in, const MimoShape& shape, const Backend& backend,
              bool check_device_values = true);

// Number of received vectors V of a validated input.
inline std::int64_t num_vectors(const DetectInput& in) { return in.y.batch; }

}  // namespace mimorx::detect
