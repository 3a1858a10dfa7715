// Shim for bench/ldpc/srsran_compare/srsran_compare.c (written for mimorx): the few declarations of srsRAN's
// header of this name that its LDPC decoder sources use. Not srsRAN code.
#pragma once
#include <stdio.h>
#define ERROR(...) fprintf(stderr, __VA_ARGS__)
#define INFO(...)
#define DEBUG(...)
