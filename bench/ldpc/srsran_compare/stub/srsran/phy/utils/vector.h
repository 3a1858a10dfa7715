// Shim for bench/ldpc/srsran_compare/srsran_compare.c (written for mimorx): the few declarations of srsRAN's
// header of this name that its LDPC decoder sources use. Not srsRAN code.
#pragma once
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
static inline void* srsran_vec_malloc(uint32_t size) { void* p = NULL; if (posix_memalign(&p, 64, size ? size : 64)) return NULL; return p; }
static inline int8_t* srsran_vec_i8_malloc(uint32_t n) { return (int8_t*)srsran_vec_malloc(n); }
static inline uint16_t* srsran_vec_u16_malloc(uint32_t n) { return (uint16_t*)srsran_vec_malloc(2 * n); }
static inline int32_t* srsran_vec_i32_malloc(uint32_t n) { return (int32_t*)srsran_vec_malloc(4 * n); }
static inline void srsran_vec_i8_zero(int8_t* p, uint32_t n) { memset(p, 0, n); }
static inline float* srsran_vec_f_malloc(uint32_t n) { return (float*)srsran_vec_malloc(4 * n); }
static inline int16_t* srsran_vec_i16_malloc(uint32_t n) { return (int16_t*)srsran_vec_malloc(2 * n); }
static inline void srsran_vec_f_zero(float* p, uint32_t n) { memset(p, 0, 4 * n); }
static inline void srsran_vec_i16_zero(int16_t* p, uint32_t n) { memset(p, 0, 2 * n); }
static inline void srsran_vec_sub_fff(const float* a, const float* b, float* z, uint32_t n) { for (uint32_t i = 0; i < n; ++i) z[i] = a[i] - b[i]; }
#define SRSRAN_MEM_ALLOC(T, N) ((T*)srsran_vec_malloc((uint32_t)sizeof(T) * (N)))
#define SRSRAN_MEM_ZERO(Q, T, N) memset((Q), 0, sizeof(T) * (N))
