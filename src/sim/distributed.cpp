#include "mimorx/sim/distributed.hpp"

#include <cstdlib>

#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::sim {

namespace {
class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  void allreduce_sum(std::span<std::int64_t>) override {}
  void allreduce_sum(std::span<double>) override {}
  void broadcast(std::string&, int) override {}
  [[noreturn]] void abort(int status) override { std::exit(status); }
};
}  // namespace

std::shared_ptr<Communicator> single_process() { return std::make_shared<SingleProcess>(); }

bool built_with_mpi() { return MIMORX_HAS_MPI != 0; }

bool launched_by_mpi() {
  // Open MPI's mpirun, MPICH/Hydra's mpiexec (PMI), srun with PMIx or PMI-2.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

#if !MIMORX_HAS_MPI
MpiSession::MpiSession() {
  throw Unsupported(
      "mpi: this build of mimorx has no MPI support; configure with -DMIMORX_MPI=ON "
      "(docs/sim_mpi.md)");
}
MpiSession::~MpiSession() = default;
#endif

}  // namespace mimorx::sim
