// OrderEvent, SideStream and CapturedSequence (lll_internal.hpp), created on first use (CUDA
// builds).
#include <atomic>

#include "lattice/lll_internal.hpp"
#if MIMORX_HAS_CUDA
#include "core/cuda_check.hpp"

namespace mimorx::lattice::detail {

OrderEvent::~OrderEvent() {
  if (handle_) (void)cudaEventDestroy(static_cast<cudaEvent_t>(handle_));
}

void OrderEvent::record(void* stream) {
  if (!handle_) {
    cudaEvent_t e = nullptr;
    MIMORX_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    handle_ = e;
  }
  MIMORX_CUDA_CHECK(
      cudaEventRecord(static_cast<cudaEvent_t>(handle_), mimorx::detail::as_stream(stream)));
}

void OrderEvent::wait(void* stream) const {
  if (handle_)
    MIMORX_CUDA_CHECK(cudaStreamWaitEvent(mimorx::detail::as_stream(stream),
                                          static_cast<cudaEvent_t>(handle_), 0));
}

SideStream::~SideStream() {
  if (handle_) (void)cudaStreamDestroy(static_cast<cudaStream_t>(handle_));
}

void* SideStream::get(int device) {
  if (!handle_) {
    MIMORX_CUDA_CHECK(cudaSetDevice(device));
    int least = 0, greatest = 0;  // numerically: least is the larger number
    MIMORX_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t h = nullptr;
    MIMORX_CUDA_CHECK(cudaStreamCreateWithPriority(&h, cudaStreamNonBlocking, least));
    handle_ = h;
  }
  return handle_;
}

namespace {
std::atomic<long> g_graph_launches{0};  // a count for tests; it changes nothing
}  // namespace

long captured_sequence_launches() { return g_graph_launches.load(); }

CapturedSequence::~CapturedSequence() {
  if (exec_) (void)cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
}

bool CapturedSequence::run(void* stream, const std::vector<std::uint64_t>& key,
                           const std::function<void()>& body, bool enabled) {
  const auto s = mimorx::detail::as_stream(stream);
  if (enabled && exec_ && key == key_) {
    MIMORX_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), s));
    ++g_graph_launches;
    return true;
  }
  if (!enabled || unsupported_ || key != seen_) {
    seen_ = key;
    body();
    return false;
  }
  // The second run with this key: capture it (nothing runs while capturing), then launch.
  if (exec_) {
    (void)cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
    exec_ = nullptr;
  }
  auto give_up = [&] {  // run it directly, now and from now on
    (void)cudaGetLastError();
    unsupported_ = true;
    body();
    return false;
  };
  MIMORX_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    body();
  } catch (...) {
    if (cudaStreamEndCapture(s, &graph) == cudaSuccess && graph) (void)cudaGraphDestroy(graph);
    return give_up();  // an error of the body's own is raised again by the direct run
  }
  if (cudaStreamEndCapture(s, &graph) != cudaSuccess || !graph) return give_up();
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  if (made != cudaSuccess) return give_up();
  exec_ = exec;
  key_ = key;
  MIMORX_CUDA_CHECK(cudaGraphLaunch(exec, s));
  ++g_graph_launches;
  return true;
}

}  // namespace mimorx::lattice::detail
#endif
