// Processes started inside a node's namespaces, and stopping them again — only ours, by PID.
//
// Start forks a child that enters the node's network and UTS namespaces, starts a new session
// (so a Ctrl-C at the terminal does not reach it), sends stdout/stderr to a log file and execs.
// Stop checks that each PID still is what was started (command name, and network namespace
// inode) before signalling it: a recycled PID is never killed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

namespace mrclab::emulator::netns {

// pass_fds: open files the program gets as fds 3, 4, ... (a VM's tap devices).
pid_t StartInNamespaces(const std::vector<std::string>& argv, int netns_fd, int uts_fd,
                        const std::string& log_path, const std::vector<int>& pass_fds = {});

struct OwnedProcess {
  pid_t pid = 0;
  std::string comm;       // expected /proc/PID/comm (first 15 chars of the program name)
  std::string netns_path; // expected network namespace file, "" = do not check
};

// True if PID is alive (not a zombie) and matches comm and namespace.
bool IsOurs(const OwnedProcess& p);

// PIDs whose command line contains `text` (destroy looks for its lab's state directory, which
// every daemon it starts has in its arguments: that finds a daemon whose deployer died between
// fork() and writing the journal line).
std::vector<pid_t> ProcessesMentioning(const std::string& text);

// PIDs of the processes in these network namespaces (inodes: NamespaceInode).
std::vector<pid_t> ProcessesInNetns(const std::set<unsigned long>& netns_inodes);

// SIGTERM to each process that IsOurs, poll until all have exited or the grace period ends,
// then SIGKILL what remains. Returns how many had to be killed with SIGKILL.
int StopProcesses(const std::vector<OwnedProcess>& processes, std::chrono::milliseconds grace);

// Runs a command to completion (in this process's namespaces) and returns its exit status;
// its stdout and stderr are captured into *output.
int RunAndWait(const std::vector<std::string>& argv, std::string* output);

// Runs the commands, up to `parallel` at a time, each to completion; returns each one's exit
// status and output, in order.
struct CommandResult {
  int status = 0;
  std::string output;
};
std::vector<CommandResult> RunAllAndWait(const std::vector<std::vector<std::string>>& commands, int parallel);

// Reaps any exited children of this process without blocking; returns their PIDs.
// True while any thread of the process still runs: its leader can be a zombie (what
// StopProcesses waits for) while other threads finish exiting and still write files.
bool AnyThreadRunning(pid_t pid);
std::vector<std::pair<pid_t, int>> ReapChildren();

}  // namespace mrclab::emulator::netns
