#include "sim_ranks.hpp"

#include <cstdio>
#include <new>
#include <vector>

#include "command.hpp"
#include "mimorx/config.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::cli {

namespace {

// The one line of a failure, as main() prints it, and the exit status it stands for.
int report(std::exception_ptr error, const std::string& where) {
  std::string what;
  int status = 2;
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    what = e.what();
  } catch (const std::bad_alloc&) {
    what = "out of memory; give smaller sizes (docs/cli.md, Limits)";
  } catch (const std::exception& e) {
    what = e.what();
    status = 1;
  } catch (...) {
    what = "unknown failure";
    status = 1;
  }
  const std::string line =
      std::string(status == 1 ? "mimorx: internal error: " : "mimorx: error: ") + where +
      printable(what) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
  return status;
}

}  // namespace

SimRanks start_sim_ranks() {
  SimRanks r;
  if (!sim::built_with_mpi() || !sim::launched_by_mpi()) return r;
  r.session = std::make_unique<sim::MpiSession>();
  r.comm = r.session->world();
  return r;
}

bool writes_outputs(const sim::Communicator* comm) { return comm == nullptr || comm->rank() == 0; }

Backend rank_backend(const std::string& name, const sim::Communicator* comm) {
  if (comm != nullptr && comm->size() > 1 && (name == "auto" || name == "cuda") &&
      built_with_cuda()) {
    const auto devices = cuda_devices();
    if (!devices.empty()) return Backend::cuda(comm->local_rank() % int(devices.size()));
  }
  return Backend::parse(name);
}

void run_agreed(sim::Communicator* comm, const std::function<void()>& step) {
  if (comm == nullptr) return step();
  std::exception_ptr error;
  try {
    step();
  } catch (...) {
    error = std::current_exception();
  }
  std::vector<std::int64_t> failed(std::size_t(comm->size()), 0);
  failed[std::size_t(comm->rank())] = error ? 1 : 0;
  comm->allreduce_sum(failed);
  for (int r = 0; r < comm->size(); ++r) {
    if (failed[std::size_t(r)] == 0) continue;
    throw RanksFailed{r == comm->rank() ? error : nullptr};
  }
}

void run_on_ranks(const std::function<void(const std::shared_ptr<sim::Communicator>&)>& body) {
  SimRanks ranks = start_sim_ranks();
  if (!ranks.comm) return body(nullptr);
  const std::string where =
      ranks.comm->size() > 1 ? "rank " + std::to_string(ranks.comm->rank()) + ": " : "";
  try {
    body(ranks.comm);
  } catch (const RanksFailed& f) {
    // Every rank is here: the job ends normally, with the status of the failure.
    // A failure of rank 0 (of every rank alike: bad input) is reported as one process would.
    const int status = f.error ? report(f.error, ranks.comm->rank() == 0 ? "" : where) : 2;
    ranks = {};  // MPI_Finalize
    throw ExitQuietly{status};
  } catch (...) {
    ranks.comm->abort(report(std::current_exception(), where));
  }
}

}  // namespace mimorx::cli
