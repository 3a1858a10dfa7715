// Shim for bench/ldpc/srsran_compare/srsran_compare.c (written for mimorx): the few declarations of srsRAN's
// header of this name that its LDPC decoder sources use. Not srsRAN code.
#pragma once
#include <stdbool.h>
#include <stdint.h>
typedef struct { int order; } srsran_crc_t;
static inline bool srsran_crc_match(srsran_crc_t* c, uint8_t* d, int n) { (void)c; (void)d; (void)n; return false; }
