#pragma once
// Received vectors y = H x + n, n ~ CN(0, N0 I), batched: vector v uses channel
// v / vectors_per_channel (a coherence block of consecutive vectors shares one H), as in
// detect/common.hpp. The noise of vector v is drawn at the counters of channel/samples.hpp with
// absolute index first_vector + v, so CPU and CUDA give bit-identical y for the same seed and
// the result does not depend on the batch split. N0 follows channel/snr.hpp.
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/core/tensor.hpp"

namespace mimorx::channel {

// h: C matrices nr x nt; x: V vectors nt x 1; y: V vectors nr x 1 (V = C * vectors_per_channel);
// noise_var: N0 >= 0 per vector (size V) or one for all (size 1). All in the backend's memory.
void apply_channel(const Backend& backend, ConstMatrixBatch<cf32> h, ConstMatrixBatch<cf32> x,
                   int vectors_per_channel, View<const float> noise_var, std::uint64_t seed,
                   std::int64_t first_vector, MatrixBatch<cf32> y, const Stream& stream = {});

// Scalar AWGN y[s] = x[s] + n[s]: the nr = nt = 1, H = 1 case (noise index first + s).
void add_awgn(const Backend& backend, View<const cf32> x, View<const float> noise_var,
              std::uint64_t seed, std::int64_t first, View<cf32> y, const Stream& stream = {});

}  // namespace mimorx::channel
