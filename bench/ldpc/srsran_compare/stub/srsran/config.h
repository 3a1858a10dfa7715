// Shim for bench/ldpc/srsran_compare/srsran_compare.c (written for mimorx): the few declarations of srsRAN's
// header of this name that its LDPC decoder sources use. Not srsRAN code.
#pragma once
#define SRSRAN_API
