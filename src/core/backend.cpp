#include "mimorx/core/backend.hpp"

#include <string>

#include "core/cuda_check.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx {

bool built_with_cuda() { return MIMORX_HAS_CUDA != 0; }

bool cuda_available() {
#if MIMORX_HAS_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return false;
  }
  return n > 0;
#else
  return false;
#endif
}

std::vector<DeviceInfo> cuda_devices() {
  std::vector<DeviceInfo> out;
#if MIMORX_HAS_CUDA
  if (!cuda_available()) return out;
  int n = 0;
  MIMORX_CUDA_CHECK(cudaGetDeviceCount(&n));
  int drv = 0, rt = 0;
  MIMORX_CUDA_CHECK(cudaDriverGetVersion(&drv));
  MIMORX_CUDA_CHECK(cudaRuntimeGetVersion(&rt));
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    MIMORX_CUDA_CHECK(cudaGetDeviceProperties(&p, i));
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.sm_count = p.multiProcessorCount;
    d.major = p.major;
    d.minor = p.minor;
    d.global_memory_bytes = p.totalGlobalMem;
    d.shared_memory_per_block_optin = p.sharedMemPerBlockOptin;
    d.l2_bytes = std::size_t(p.l2CacheSize);
    d.driver_version = drv;
    d.runtime_version = rt;
    out.push_back(d);
  }
#endif
  return out;
}

Backend Backend::cuda(int device) {
#if MIMORX_HAS_CUDA
  if (!cuda_available()) {
    throw Unsupported("backend: cuda requested but no CUDA GPU is visible; use --backend cpu");
  }
  int n = 0;
  MIMORX_CUDA_CHECK(cudaGetDeviceCount(&n));
  require(device >= 0 && device < n, "backend",
          "cuda device " + std::to_string(device) + " does not exist (0.." +
              std::to_string(n - 1) + ")");
  return Backend(BackendKind::cuda, device);
#else
  (void)device;
  throw Unsupported("backend: cuda requested but this build has no CUDA backend; "
                    "rebuild with -DMIMORX_CUDA=ON or use --backend cpu");
#endif
}

Backend Backend::automatic() { return cuda_available() ? cuda(0) : cpu(); }

Backend Backend::parse(const std::string& name) {
  if (name == "auto") return automatic();
  if (name == "cpu") return cpu();
  if (name == "cuda") return cuda(0);
  if (name.rfind("cuda:", 0) == 0) {
    const std::string idx = name.substr(5);
    require(!idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos, "backend",
            "'" + name + "' is not valid; use auto, cpu, cuda or cuda:N");
    return cuda(std::stoi(idx));
  }
  throw InvalidArgument("backend: '" + name + "' is not valid; use auto, cpu, cuda or cuda:N");
}

std::string Backend::name() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(device_);
}

}  // namespace mimorx
