#pragma once
// What the executor asks of a backend (CPU: MPI + BLAS; GPU: CUDA + cuBLAS + NCCL). The executor walks
// a rank's op list as the simulator does — ops on one stream in order, streams concurrently,
// dependencies honoured — and hands each op whose turn has come to the backend; the backend runs it on
// the op's stream and reports when it ended. Times are seconds on the backend's clock (see now()).
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "workloads/program.hpp"

namespace paratwin::exec {

// An op that ended: its index in the rank's role and when it ran.
struct Finished {
  uint32_t op = 0;
  double start = 0, end = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // Called once, collectively on every rank, before any op: builds the communicators of every group
  // the Program's collectives use (one per group of each axis mask) and whatever else the rank needs.
  virtual void prepare(const workloads::Program& program, int64_t rank) = 0;

  // Starts op `index` of the rank's role. Compute ops may run to completion before this returns (one
  // compute stream on a CPU) or be enqueued (GPU streams); communication starts and proceeds while
  // other ops run. Every started op is reported once by wait().
  virtual void start(const workloads::Op& op, uint32_t index) = 0;

  // Blocks until at least one started op has ended (returns at once when some already have), and
  // returns every op that ended since the last call. Throws when an op failed (naming it).
  virtual std::vector<Finished> wait() = 0;

  // Seconds on this rank's clock, the one start and end times use.
  virtual double now() const = 0;

  // Blocks until every started op has ended (end of an iteration).
  virtual void drain() = 0;
};

// A backend this build has that cannot run on this host: its plugin is missing or does not load (a
// library it needs is absent). The CLI ends with the status of a job that failed, not of bad input.
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Backends by name: "cpu" (always), "cuda" (when built with CUDA, NCCL and cuBLAS). Throws InputError
// naming --backend and the backends this build has, and BackendUnavailable when "cuda"'s plugin cannot be
// loaded.
std::unique_ptr<Backend> make_backend(const std::string& name);
std::vector<std::string> backend_names();

// The GPU backend lives in a plugin, libparatwin_cuda.so, so that only `--backend cuda` pays for
// loading CUDA, cuBLAS and NCCL (about 200 MB of every process's memory otherwise). It is looked for
// beside the running executable; this variable names another file.
constexpr const char* kCudaPluginEnv = "PARATWIN_CUDA_PLUGIN";
constexpr const char* kCudaPluginFile = "libparatwin_cuda.so";
// The plugin's one entry point. Its name carries the version of the interface between the executable
// and the plugin (Backend, Program): a plugin built from other sources is refused, not called.
constexpr const char* kCudaPluginFactory = "paratwin_make_cuda_backend_v1";
using CudaPluginFactory = Backend* (*)();

}  // namespace paratwin::exec
