#pragma once
// What the simulator needs from a group of processes that run one simulation together
// (docs/sim_mpi.md): each process (rank) simulates a disjoint share of the indices of every
// round of a point, and the ranks sum their counts after each round, so that every rank sees
// the counts a single process would and stops at the same place.
//
// A Communicator is passed in the sim config objects (UncodedConfig, CodedConfig,
// NrLinkConfig); none there means this process alone. The single-process communicator is always
// built; the MPI one only where the build has MPI (config.hpp: MIMORX_HAS_MPI).
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace mimorx::sim {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;  // 0 .. size() - 1
  virtual int size() const = 0;
  // This rank's index among the ranks of its node (its GPU, docs/sim_mpi.md).
  virtual int local_rank() const = 0;
  // Element-wise sums over the ranks, in place; every rank calls it with the same length.
  virtual void allreduce_sum(std::span<std::int64_t> values) = 0;
  virtual void allreduce_sum(std::span<double> values) = 0;
  // `text` of rank `root` on every rank.
  virtual void broadcast(std::string& text, int root) = 0;
  // Ends every rank of the job with exit status `status` (a rank that failed alone: the others
  // would wait for it forever).
  [[noreturn]] virtual void abort(int status) = 0;
};

// The communicator of one process: rank 0 of 1, sums are the values themselves.
std::shared_ptr<Communicator> single_process();

// Whether this build has MPI support.
bool built_with_mpi();

// Whether this process was started by an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx):
// their environment variables are present.
bool launched_by_mpi();

// Initialises MPI for the lifetime of the session and gives the communicator of all its ranks
// (MPI_COMM_WORLD). One session per process; throws Unsupported where the build has no MPI.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  std::shared_ptr<Communicator> world() const { return world_; }

 private:
  std::shared_ptr<Communicator> world_;
};

}  // namespace mimorx::sim
