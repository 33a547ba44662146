#pragma once
// Other programs that reports and calibration runs start and wait for: gnuplot, mpirun, paratwin itself.
#include <string>
#include <vector>

namespace paratwin {

// The full path of `program` on the PATH, or "" when it is not there.
std::string find_on_path(const std::string& program);
// This executable's path (/proc/self/exe), for running paratwin's own subcommands.
std::string self_executable();
// Runs argv[0] (searched on the PATH) with its output (stdout and stderr) going to `log`, in `dir`
// when not empty, and waits. Returns its exit status; 128 + the signal when one killed it; 127 when
// it could not be started.
int run_logged(const std::vector<std::string>& argv, const std::string& log, const std::string& dir = "");
// Runs gnuplot on `script` in `dir` with its output in dir/STEM.log (removed after a success unless
// `keep_log`); "" on success, else why there is no plot.
std::string run_gnuplot(const std::string& dir, const std::string& script, bool keep_log = false);
// The last `lines` lines of a text file ("" when it cannot be read), for error messages.
std::string tail_of(const std::string& path, int lines);

}  // namespace paratwin
