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

// `#pragma unroll` in shared host/device code: the host compiler warns on it (an error with
// -Werror), so it is emitted only in the device pass.
#if defined(__CUDA_ARCH__)
#define MIMORX_UNROLL _Pragma("unroll")
#else
#define MIMORX_UNROLL
#endif
