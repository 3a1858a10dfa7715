#pragma once
// `mimorx sim` as an MPI job (docs/sim_mpi.md): started by mpirun or srun, every rank runs the
// same command on its share of each round, rank 0 writes the table, the files and the progress,
// and a failure ends every rank instead of leaving the others waiting.
#include <functional>
#include <memory>
#include <string>

#include "mimorx/core/backend.hpp"
#include "mimorx/sim/distributed.hpp"

namespace mimorx::cli {

// The ranks of this run: an MPI session when an MPI launcher started this process (and the
// build has MPI), else none (this process alone; comm is null).
struct SimRanks {
  std::unique_ptr<sim::MpiSession> session;
  std::shared_ptr<sim::Communicator> comm;
};
SimRanks start_sim_ranks();

// Whether this rank writes the outputs (rank 0, or this process alone).
bool writes_outputs(const sim::Communicator* comm);

// The backend of this rank: with several ranks, "auto" and "cuda" take the CUDA device
// local_rank mod the devices of the node (where the build has CUDA and a GPU is visible);
// "cuda:N" and "cpu" are taken as given.
Backend rank_backend(const std::string& name, const sim::Communicator* comm);

// A failure the ranks agreed on (run_agreed): `error` is set on the one rank that reports it
// (the lowest failed rank) and null on the others, which end quietly.
struct RanksFailed {
  std::exception_ptr error;
};

// Runs `step` on every rank; when it throws on any of them, every rank throws RanksFailed (a
// collective). With comm null, `step` just runs.
void run_agreed(sim::Communicator* comm, const std::function<void()>& step);

// Runs `body` (the whole command) on the ranks: a RanksFailed is reported by its rank (one line
// on stderr, "rank R: " before it unless R is 0) and every rank ends normally with exit status 2
// (1 for an internal error on the reporting rank); any other failure of a rank is reported by
// that rank ("rank R: ...") and ends the whole job with its exit status (MPI_Abort), since the
// other ranks would wait for it forever.
void run_on_ranks(const std::function<void(const std::shared_ptr<sim::Communicator>&)>& body);

}  // namespace mimorx::cli
