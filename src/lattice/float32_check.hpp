#pragma once
// The float32 lattice check and repair of LllPlan's outputs (float32_check.cpp; docs/lll.md,
// "The float32 lattice check"): a float32 result must stay a basis of the input lattice, and
// a basis float32 called singular is judged on its input.
#include <cstdint>

#include "mimorx/config.hpp"
#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/lattice/lll.hpp"

namespace mimorx::lattice::detail {

// singular where the float64 column-pivoted QR of b (n x m; float or double) finds it dependent
// to float32 resolution, else precision_loss (float32 lost a part the lattice has).
template <class T>
LllStatus classify_float32_singular(int n, int m, const T* b);

// The CPU paths' epilogue for one float32 basis b (n x m; b_in: its input as doubles; t: its T
// or null): with check (LllConfig::lattice_check) a reduced b is checked against B T and
// repaired where it drifted; a singular one is judged on b_in. Returns the final status.
LllStatus finish_float32(int n, int m, const double* b_in, std::int64_t* t, float* b, double delta,
                         LllStatus status, bool check);

#if MIMORX_HAS_CUDA
// The host's part of the CUDA all-swap check of a rebuilt basis hb (input hin, T ht): the LLL
// conditions in the float32 tolerances, else a float64 polish (hb and ht updated).
LllStatus recheck_rebuilt_host(int n, int m, const float* hin, std::int64_t* ht, float* hb,
                               double delta);
// finish_float32 for the GPU-resident block method (in, b, t in device memory on `device`;
// scratch grows as needed; options: split_k).
LllStatus finish_float32_device(int n, int m, const float* in, std::int64_t* t, float* b,
                                double delta, LllStatus status, bool check, Buffer<double>& scratch,
                                const Stream& stream, int device, const LllOptions& options);
#endif

}  // namespace mimorx::lattice::detail
