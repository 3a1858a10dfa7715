#pragma once
// MIMORX_HD marks arithmetic shared by the CPU reference and the CUDA kernels: the same
// source line computes both, which is what makes CPU==CUDA tests meaningful.
#if defined(__CUDACC__)
#define MIMORX_HD __host__ __device__ __forceinline__
#define MIMORX_DEVICE_CODE 1
#else
#define MIMORX_HD inline
#define MIMORX_DEVICE_CODE 0
#endif
