#pragma once
// The block files of `mimorx ldpc` (docs/ldpc.md): one code block per line. Every reader throws
// InvalidArgument "input: ..." naming the line or block and what was expected.
#include <cstdint>
#include <string>
#include <vector>

namespace mimorx::cli {

// Lines of `k` characters 0/1 (whitespace ignored, blank lines skipped): the bits, block after
// block (at least one block).
std::vector<std::uint8_t> read_bit_blocks(const std::string& text, int k);

// Blocks of `e` LLRs (positive = bit 0), every one finite: text, one block of numbers per line,
// or (binary) float32 little-endian, blocks back to back.
std::vector<float> read_llr_blocks(const std::string& text, int e, bool binary);

}  // namespace mimorx::cli
