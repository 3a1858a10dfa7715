#pragma once
// The simulator's frame generator: for frames [first, first + count) writes source bits,
// channels and received vectors in the library layout, on the backend's memory.
#include <cstdint>

#include "mimorx/core/backend.hpp"
#include "mimorx/core/complex.hpp"
#include "mimorx/modem/modulation.hpp"

namespace mimorx::sim::detail {

struct FrameBatch {
  std::uint8_t* bits;  // count * nt * m
  cf32* h;             // count matrices nr x nt
  cf32* y;             // count vectors nr
};

// CUDA entries run on `stream` (a cudaStream_t; null is the legacy default stream).
void make_frames_cpu(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt, int nr,
                     Modulation mod, float n0, FrameBatch out);
void make_frames_cuda(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt, int nr,
                      Modulation mod, float n0, FrameBatch out, int device, void* stream);

// Uncoded link: bit errors (low byte) and symbol errors (high byte) of each received vector.
void vector_errors_cpu(const std::uint8_t* sent, const std::uint8_t* got, std::int64_t count,
                       int nt, int m, std::uint16_t* errors);
void vector_errors_cuda(const std::uint8_t* sent, const std::uint8_t* got, std::int64_t count,
                        int nt, int m, std::uint16_t* errors, void* stream);

// Coded link: the information bits of transport blocks [first, first + count), tbs each.
void transport_bits_cpu(std::uint64_t seed, std::int64_t first, std::int64_t count, int tbs,
                        std::uint8_t* tb);
void transport_bits_cuda(std::uint64_t seed, std::int64_t first, std::int64_t count, int tbs,
                         std::uint8_t* tb, void* stream);
// Coded link: channels and received vectors of vectors [first, first + count), which carry
// `bits` (count x nt x m coded bits).
void make_received_cpu(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt, int nr,
                       Modulation mod, float n0, const std::uint8_t* bits, cf32* h, cf32* y);
void make_received_cuda(std::uint64_t seed, std::int64_t first, std::int64_t count, int nt, int nr,
                        Modulation mod, float n0, const std::uint8_t* bits, cf32* h, cf32* y,
                        void* stream);
// Coded link: bit errors of each transport block (sent and decoded, count x tbs bits).
void block_errors_cpu(const std::uint8_t* sent, const std::uint8_t* got, std::int64_t count,
                      int tbs, int* errors);
void block_errors_cuda(const std::uint8_t* sent, const std::uint8_t* got, std::int64_t count,
                       int tbs, int* errors, void* stream);

}  // namespace mimorx::sim::detail
