// Times srsRAN 4G's CPU LDPC decoders (8-bit LLRs: scalar, AVX2, AVX-512; layered normalized
// min-sum, scaling 0.75, 10 iterations, no CRC so no early stop) on one core, on the codes of
// mimorx's decoder benchmarks, to set beside mimorx's CPU decoder (bench_decoder_ldpc). Not part
// of the CMake build and no srsRAN code in this repository: it compiles against a checkout of
// srsRAN_4G (lib/include and lib/src/phy/fec/ldpc) with the shim headers in stub/ in place of
// srsRAN's config, CRC, debug and vector headers (only the few calls the decoders make):
//   S=/path/to/srsRAN_4G
//   for f in $S/lib/src/phy/fec/ldpc/*.c; do
//     gcc -O3 -march=native -DLV_HAVE_AVX2 -DLV_HAVE_AVX512 -Ibench/ldpc/srsran_compare/stub \
//       -I$S/lib/include -c $f -o /tmp/srs_$(basename $f .c).o; done
//   gcc -O3 -march=native -DLV_HAVE_AVX2 -DLV_HAVE_AVX512 -Ibench/ldpc/srsran_compare/stub \
//     -I$S/lib/include bench/ldpc/srsran_compare/srsran_compare.c /tmp/srs_*.o -lm -o srsran_compare
//   taskset -c 0 ./srsran_compare
// The LLRs are random int8 values (N(0, 4^2), saturated): without early stop the work does not
// depend on them.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <time.h>

#include "srsran/phy/fec/ldpc/ldpc_decoder.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// Box-Muller on a 64-bit LCG: reproducible, no library.
static uint64_t state = 12345;
static double uniform01(void) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return ((double)(state >> 11) + 0.5) / 9007199254740992.0;
}
static int8_t llr_value(void) {
  const double g = sqrt(-2.0 * log(uniform01())) * cos(6.283185307179586 * uniform01());
  const double v = 4.0 * g;
  return (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
}

struct code {
  const char* name;
  srsran_basegraph_t bg;
  uint16_t ls;
  uint32_t rm_length;  // transmitted bits (the 2 Z punctured columns not counted)
  uint32_t k;          // information bits
};

int main(void) {
  const struct code codes[] = {
      {"paper (2080,1760) BG1 Z=80 6 rows", BG1, 80, 2080, 1760},
      {"BG1 Z=384 R=1/3 (46 rows)", BG1, 384, 66 * 384, 22 * 384},
      {"BG1 Z=384 R=0.917 (4 rows)", BG1, 384, 24 * 384, 22 * 384},
      {"BG2 Z=384 R=1/5 (42 rows)", BG2, 384, 50 * 384, 10 * 384},
  };
  const struct {
    const char* name;
    srsran_ldpc_decoder_type_t type;
  } kinds[] = {{"scalar 8-bit", SRSRAN_LDPC_DECODER_C},
               {"AVX2 8-bit", SRSRAN_LDPC_DECODER_C_AVX2},
               {"AVX-512 8-bit", SRSRAN_LDPC_DECODER_C_AVX512}};
  printf("| code | srsRAN decoder | us/codeword | info Mbit/s (one core) |\n|---|---|---|---|\n");
  for (size_t c = 0; c < sizeof(codes) / sizeof(codes[0]); ++c) {
    const uint32_t n_full = (codes[c].bg == BG1 ? 68u : 52u) * codes[c].ls;
    int8_t* llr = malloc(n_full);
    uint8_t* msg = malloc(n_full);
    for (uint32_t i = 0; i < n_full; ++i) llr[i] = llr_value();
    for (size_t d = 0; d < sizeof(kinds) / sizeof(kinds[0]); ++d) {
      srsran_ldpc_decoder_t q;
      srsran_ldpc_decoder_args_t args = {0};
      args.type = kinds[d].type;
      args.bg = codes[c].bg;
      args.ls = codes[c].ls;
      args.scaling_fctr = 0.75f;
      args.max_nof_iter = 10;
      if (srsran_ldpc_decoder_init(&q, &args) != 0) {
        printf("| %s | %s | init failed | - |\n", codes[c].name, kinds[d].name);
        continue;
      }
      int reps = 1;
      double dt = 0;
      // Double the repetitions until a run takes 0.5 s; report the last.
      for (;;) {
        const double t0 = now_s();
        for (int r = 0; r < reps; ++r) srsran_ldpc_decoder_decode_c(&q, llr, msg, codes[c].rm_length);
        dt = now_s() - t0;
        if (dt > 0.5) break;
        reps *= 2;
      }
      const double us = dt / reps * 1e6;
      printf("| %s | %s | %.1f | %.1f |\n", codes[c].name, kinds[d].name, us,
             (double)codes[c].k / us);
      srsran_ldpc_decoder_free(&q);
    }
    free(llr);
    free(msg);
  }
  return 0;
}
