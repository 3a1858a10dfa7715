// The MPI communicator (MPI_COMM_WORLD), built only where the build has MPI.
#include "mimorx/config.hpp"
#if MIMORX_HAS_MPI
#include <mpi.h>

#include <cstdlib>
#include <string>

#include "mimorx/core/error.hpp"
#include "mimorx/sim/distributed.hpp"

namespace mimorx::sim {

namespace {

void check(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw Error(std::string("mpi: ") + call + " failed: " + std::string(text, std::size_t(length)));
}

// The launcher's local rank where it sets one, else the rank among the ranks that share this
// node's memory.
int node_local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') {
      char* end = nullptr;
      const long r = std::strtol(v, &end, 10);
      if (*end == '\0' && r >= 0) return int(r);
    }
  }
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  int r = 0;
  check(MPI_Comm_rank(node, &r), "MPI_Comm_rank");
  MPI_Comm_free(&node);
  return r;
}

class MpiWorld final : public Communicator {
 public:
  MpiWorld() {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    local_rank_ = node_local_rank();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  void allreduce_sum(std::span<std::int64_t> v) override {
    check(
        MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce");
  }
  void allreduce_sum(std::span<double> v) override {
    check(MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
  }
  void broadcast(std::string& text, int root) override {
    long long length = (long long)text.size();
    check(MPI_Bcast(&length, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD), "MPI_Bcast");
    text.resize(std::size_t(length));
    check(MPI_Bcast(text.data(), int(length), MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
  }
  [[noreturn]] void abort(int status) override {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);  // MPI_Abort does not return; should it, this rank still ends
  }

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0;
};

}  // namespace

MpiSession::MpiSession() {
  int initialized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  if (initialized) throw Unsupported("mpi: MPI is already initialised; one MpiSession a process");
  // Only the thread that created the session calls MPI (the simulators' OpenMP threads never).
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // A rank's failure reaches the caller as an exception (and ends the job by abort()).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  world_ = std::make_shared<MpiWorld>();
}

MpiSession::~MpiSession() {
  world_.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace mimorx::sim
#endif
