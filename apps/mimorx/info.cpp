// mimorx info: what this build contains and which GPUs it sees.
#include <fmt/format.h>

#include "command.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/backend.hpp"
#include "mimorx/sim/distributed.hpp"

namespace {
void add_info(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Show build configuration, backends and GPUs");
  cmd->callback([] {
    fmt::print("mimorx {}\n", MIMORX_VERSION);
    fmt::print("backends: cpu{}\n", mimorx::built_with_cuda() ? ", cuda" : "");
    fmt::print("cuda archs: {}\n", mimorx::built_with_cuda() ? MIMORX_CUDA_ARCHS : "(not built)");
    fmt::print("mpi: {}\n", mimorx::sim::built_with_mpi()
                                ? "built (mpirun -n N mimorx sim ..., docs/sim_mpi.md)"
                                : "(not built)");
    const auto devices = mimorx::cuda_devices();
    if (devices.empty()) {
      fmt::print("gpus: none visible\n");
    }
    for (const auto& d : devices) {
      fmt::print(
          "gpu {}: {} (sm_{}{}), {} SMs, {:.1f} GiB, L2 {:.0f} MiB, smem/block {} KiB, "
          "driver {} runtime {}\n",
          d.index, d.name, d.major, d.minor, d.sm_count, double(d.global_memory_bytes) / (1 << 30),
          double(d.l2_bytes) / (1 << 20), d.shared_memory_per_block_optin / 1024, d.driver_version,
          d.runtime_version);
    }
  });
}
}  // namespace
MIMORX_REGISTER_COMMAND(info, add_info);
