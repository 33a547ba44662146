#include "importers/launch_script.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "common/child_process.hpp"
#include "common/input_error.hpp"

namespace paratwin::importers {

namespace fs = std::filesystem;

namespace {

// Programs a launch script starts training through, directly or as a wrapper of the next one.
constexpr const char* kLaunchers[] = {"torchrun", "python",  "python3", "uv",        "srun",        "sbatch",
                                      "mpirun",   "mpiexec", "jsrun",   "flux",      "deepspeed",   "nsys",
                                      "ncu",      "numactl", "taskset", "apptainer", "singularity", "accelerate"};

// Megatron-LM's entry points, present in the scratch folder as empty files: scripts check that they
// run from the repository's root (`[ -f pretrain_gpt.py ]`).
constexpr const char* kEntryPoints[] = {"pretrain_gpt.py",   "pretrain_bert.py",   "pretrain_t5.py",
                                        "pretrain_mamba.py", "pretrain_hybrid.py", "pretrain_vlm.py"};

// The recorder: its own name, the number of its arguments, then each, NUL-terminated. A job
// submitter or launcher that runs a shell command line (`sbatch <<EOF ... EOF`, `srun ... bash -c
// "CMD"`, as Megatron-LM's sbatch examples do) runs it instead, its launchers recorded in turn.
constexpr const char* kRecorder = R"(#!/bin/sh
# paratwin import --script: stands for a launcher, records its command and starts nothing.
name=${0##*/}
{ printf '%s\0' "$name" "$#"; [ "$#" -gt 0 ] && printf '%s\0' "$@"; } >> "$PARATWIN_LAUNCH_RECORD"
case $name in
  sbatch)
    for last in "$@"; do :; done
    if [ -n "${last:-}" ] && [ -f "$last" ]; then exec bash "$last"; fi
    exec bash -s ;;
  srun|mpirun|mpiexec|jsrun|flux)
    while [ $# -gt 0 ]; do
      case $1 in
        bash|sh|*/bash|*/sh)
          shift
          while [ $# -gt 0 ]; do
            case $1 in
              -c) exec bash -c "$2" ;;
              -*) shift ;;
              *) exec bash "$@" ;;
            esac
          done ;;
      esac
      shift
    done ;;
esac
exit 0
)";

// A scratch folder removed with everything in it when the run is over.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (fs::temp_directory_path() / "paratwin-script-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw InputError("--script", "cannot create a scratch folder in " + fs::temp_directory_path().string());
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw InputError("--script", "cannot write " + path.string());
}

std::vector<std::vector<std::string>> read_record(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> fields;
  size_t at = 0;
  while (at < data.size()) {
    const size_t end = data.find('\0', at);
    if (end == std::string::npos) break;
    fields.push_back(data.substr(at, end - at));
    at = end + 1;
  }
  std::vector<std::vector<std::string>> commands;
  for (size_t i = 0; i + 1 < fields.size();) {
    std::vector<std::string> command{fields[i]};
    const size_t count = std::strtoul(fields[i + 1].c_str(), nullptr, 10);
    i += 2;
    for (size_t k = 0; k < count && i < fields.size(); ++k, ++i) command.push_back(fields[i]);
    commands.push_back(std::move(command));
  }
  return commands;
}

bool is_python(const std::string& word) {
  const std::string base = fs::path(word).filename().string();
  return base.rfind("python", 0) == 0 && base.find_first_not_of("0123456789.", 6) == std::string::npos;
}

std::string joined(const std::vector<std::string>& words, size_t limit = 160) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out.size() > limit ? out.substr(0, limit) + " ..." : out;
}

}  // namespace

RecordedLaunch record_launch(const std::string& flag, const std::string& script,
                             const std::vector<std::string>& arguments, double timeout_s) {
  std::error_code ec;
  if (!fs::is_regular_file(script, ec)) throw InputError(flag, script + ": no such file");
  if (::access(script.c_str(), R_OK) != 0) throw InputError(flag, script + ": cannot be read");
  const std::string bash = find_on_path("bash");
  if (bash.empty()) throw InputError(flag, "bash is not on the PATH: it runs the launch script");
  const std::string absolute = fs::absolute(script).string();

  ScratchFolder scratch;
  const fs::path bin = scratch.path() / "launchers", work = scratch.path() / "work";
  fs::create_directories(bin);
  fs::create_directories(work);
  write_text(bin / "record", kRecorder);
  fs::permissions(bin / "record", fs::perms::owner_all);
  for (const char* name : kLaunchers) fs::create_symlink("record", bin / name);
  for (const char* name : kEntryPoints) write_text(work / name, "");
  const std::string record = (scratch.path() / "launch.record").string();
  const std::string output = (scratch.path() / "output.log").string();
  const char* path = std::getenv("PATH");
  const std::string new_path = bin.string() + (path ? ":" + std::string(path) : "");

  std::vector<std::string> argv{bash, absolute};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) throw InputError(flag, "cannot start bash");
  if (pid == 0) {
    ::setpgid(0, 0);  // its own process group: a timeout stops everything it started
    if (::chdir(work.c_str()) != 0) ::_exit(127);
    ::setenv("PATH", new_path.c_str(), 1);
    ::setenv("PARATWIN_LAUNCH_RECORD", record.c_str(), 1);
    ::setenv("PWD", work.c_str(), 1);
    const int in = ::open("/dev/null", O_RDONLY);
    if (in >= 0) ::dup2(in, 0);
    const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execv(bash.c_str(), args.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      throw InputError(flag, script + " did not finish within " + std::to_string(static_cast<int>(timeout_s)) +
                                 " s (it runs with its launchers recorded, not started; does it wait for input "
                                 "or for a job?)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  RecordedLaunch out;
  out.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  out.commands = read_record(record);
  out.output = tail_of(output, 8);
  return out;
}

std::vector<std::string> training_command(const std::string& flag, const std::string& script,
                                          const RecordedLaunch& launch) {
  for (const auto& command : launch.commands) {
    // A script path among the arguments: not the code of `python -c CODE`.
    bool has_script = false;
    for (size_t i = 1; i < command.size(); ++i)
      if (command[i].size() > 3 && command[i].ends_with(".py") && command[i - 1] != "-c") has_script = true;
    if (!has_script) continue;
    // From the launcher proper on: torchrun, or the Python interpreter (python -m torch.distributed.run).
    size_t from = 0;
    for (size_t i = 0; i < command.size(); ++i) {
      const std::string base = fs::path(command[i]).filename().string();
      if (base == "torchrun" || is_python(command[i])) {
        from = i;
        break;
      }
      if (command[i].ends_with(".py")) break;  // no launcher: the words before are the wrapper's
    }
    return {command.begin() + static_cast<std::ptrdiff_t>(from), command.end()};
  }
  std::string message;
  if (launch.commands.empty())
    message = script + " launched no training command (torchrun, python, srun, ...)";
  else
    message = script + " launched no Python training script; it ran: " + joined(launch.commands.front());
  message += "; it exited with status " + std::to_string(launch.exit_status);
  if (!launch.output.empty()) {
    std::string lines;
    for (size_t at = 0; at < launch.output.size();) {
      const size_t end = launch.output.find('\n', at);
      const std::string line = launch.output.substr(at, end == std::string::npos ? std::string::npos : end - at);
      const size_t text = line.find_first_not_of(' ');
      if (text != std::string::npos) lines += (lines.empty() ? "" : " | ") + line.substr(text);
      if (end == std::string::npos) break;
      at = end + 1;
    }
    message += ", printing: " + lines;
  }
  throw InputError(flag, message);
}

}  // namespace paratwin::importers
