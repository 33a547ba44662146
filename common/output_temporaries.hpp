#pragma once
// The temporary files outputs are written into before they are renamed over their targets
// (text_file.cpp): NAME.tmp-PID.stream for a streamed trace, NAME.tmp-PID.N for the others. A run
// interrupted by SIGINT, SIGTERM or SIGHUP removes its own; one killed outright (SIGKILL, a crash)
// cannot, and the next successful write of the same target removes those whose process is gone.
#include <string>

namespace paratwin {

// Records `path` as a temporary file of this process, to be removed if the process is interrupted or
// exits before untrack_temporary(). The first call installs the handlers of SIGINT, SIGTERM and SIGHUP
// (not where a signal is ignored) that remove them and then do what the signal did before, and the same
// removal at exit() (SimGrid's own SIGINT handler ends the process with exit()).
void track_temporary(const std::string& path);
void untrack_temporary(const std::string& path);

// Removes this process's tracked temporary files. Async-signal-safe: a signal handler installed later
// (one that ends the process without exit()) should call it first.
void remove_output_temporaries();

// Removes the temporary files of `target` (TARGET.tmp-PID.stream, TARGET.tmp-PID.N, TARGET.tmp-PID)
// left by processes that no longer run; those of a live process are its own business.
void remove_stale_temporaries(const std::string& target);

}  // namespace paratwin
