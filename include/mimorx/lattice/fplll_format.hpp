#pragma once
// fplll's matrix text format: "[[a b c]\n[d e f]\n]" with ROWS as basis vectors. mimorx keeps
// basis vectors as COLUMNS; these helpers transpose on the way in and out.
#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace mimorx::lattice {

struct TextBasis {
  int n = 0;              // dimension (entries per vector = fplll's columns)
  int m = 0;              // vectors (fplll's rows)
  std::vector<double> b;  // n x m, column-major: column j = fplll row j
  bool integer = true;    // every entry is an integer (read_fplll accepts nothing else)
};

// Reads the next matrix; false at end of input. Throws InvalidArgument (naming the line) on
// malformed text, ragged rows, entries that are not integers written as digits ("1.5", "1e20")
// or integers beyond 2^53 in magnitude (compared exactly, before any rounding to double).
bool read_fplll(std::istream& in, TextBasis& out, int* line = nullptr);
// Writes n x m column-major b in fplll's bytes (rows = vectors, every entry followed by a space,
// "[[1 2 ]\n[3 4 ]\n]\n"); integers without a decimal point.
void write_fplll(std::ostream& out, int n, int m, const double* b, bool integer);
// Writes an m x m integer matrix T (column-major) with rows = fplll's convention for U:
// fplll's -of u prints U with U * B_rows = B'_rows, i.e. U = T^T.
void write_fplll_transform(std::ostream& out, int m, const std::int64_t* t);

}  // namespace mimorx::lattice
