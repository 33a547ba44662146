#pragma once
// Exit codes, one table for every command (README.md, "Exit status"): 0 success; 1 internal error (a
// bug); 2 bad input: an option, input file or output path (the message names it, the file, JSON path and
// rule); 3 finished, but some results failed (sweep points, validation points, baseline or verify
// checks); 4 the job failed while running (a rank failed, was stopped or timed out; a backend cannot run
// on this host). Here, below the libraries, for the jobs that end their own MPI processes with one.

namespace paratwin {

constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitSomeFailed = 3;
constexpr int kExitJobFailed = 4;

}  // namespace paratwin
