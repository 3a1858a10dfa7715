#pragma once
// Where a plan runs. Plans are built for one backend and never switch in the middle of a run.
#include <string>
#include <vector>

namespace mimorx {

enum class BackendKind { cpu, cuda };

class Backend {
 public:
  static Backend cpu() { return Backend(BackendKind::cpu, -1); }
  static Backend cuda(int device = 0);  // throws Unsupported without CUDA or GPU
  // CUDA device 0 where one is present and this build has CUDA, else CPU.
  static Backend automatic();
  // "auto", "cpu" or "cuda[:N]"; throws InvalidArgument naming the allowed values.
  static Backend parse(const std::string& name);

  BackendKind kind() const { return kind_; }
  bool is_cpu() const { return kind_ == BackendKind::cpu; }
  bool is_cuda() const { return kind_ == BackendKind::cuda; }
  int device() const { return device_; }
  std::string name() const;

 private:
  Backend(BackendKind k, int d) : kind_(k), device_(d) {}
  BackendKind kind_;
  int device_;
};

// True when this build has the CUDA backend and at least one usable GPU is present.
bool cuda_available();
bool built_with_cuda();

struct DeviceInfo {
  int index = 0;
  std::string name;
  int sm_count = 0;
  int major = 0, minor = 0;
  std::size_t global_memory_bytes = 0;
  std::size_t shared_memory_per_block_optin = 0;
  std::size_t l2_bytes = 0;
  int driver_version = 0, runtime_version = 0;
};
std::vector<DeviceInfo> cuda_devices();  // empty without CUDA or GPU

}  // namespace mimorx
