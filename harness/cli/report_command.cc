#include "harness/cli/report_command.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/errors.h"

extern char** environ;

namespace mrclab::harness {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

// Runs `python3 SCRIPT ARGS...` with default signal handling (Ctrl-C reaches Python), waits for
// it and returns its exit status (128 + signal when it was killed).
int RunPython(const std::string& script, const std::vector<std::string>& args) {
  if (!std::filesystem::exists(script))
    throw emulator::InputError(script + ": not found (the reports run from the source tree mrclab was built from)");
  if (access(kPython, X_OK) != 0)
    throw emulator::InputError(std::string(kPython) + ": not found; run `bash .ci/setup` to install it");
  std::vector<std::string> words = {kPython, script};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, kPython, nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::runtime_error(std::string("cannot run ") + kPython + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waiting for ") + kPython + ": " + std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int WriteReport(const std::string& run_dir) {
  return RunPython(std::string(MRCLAB_SOURCE_DIR) + "/reports/report.py", {run_dir});
}

namespace {

// A subcommand whose arguments all go to the script, --help included.
void AddPassThrough(CLI::App& app, const char* name, const char* script, const char* description,
                    const char* usage, int& exit_status) {
  auto* cmd = app.add_subcommand(name, description);
  cmd->set_help_flag();  // the script's --help teaches; CLI11 must not take it
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->footer(usage);
  const std::string path = std::string(MRCLAB_SOURCE_DIR) + "/reports/" + script;
  cmd->callback([cmd, path, name, &exit_status] {
    // The script runs drills with this very binary, and names the command as it was typed.
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) setenv("MRCLAB", self.c_str(), 1);
    setenv("MRCLAB_COMMAND", (std::string("mrclab ") + name).c_str(), 1);
    exit_status = RunPython(path, cmd->remaining());
  });
}

}  // namespace

void AddReportCommands(CLI::App& app, int& exit_status) {
  AddPassThrough(app, "report", "report.py",
                 "Write RUN_DIR/report.html (self-contained) and RUN_DIR/report.md of a drill run: verdict, SLOs, "
                 "step time with the faults, goodput, EV states, links, BGP/BFD, lab diagram",
                 "Usage: mrclab report RUN_DIR   (mrclab report --help for details)", exit_status);
  AddPassThrough(app, "compare", "compare.py",
                 "Compare drill runs side by side (every transport of every run a column) and flag what got "
                 "worse; writes compare.html and compare.md",
                 "Usage: mrclab compare RUN_A RUN_B ... [--out DIR]   (mrclab compare --help for details)",
                 exit_status);
  AddPassThrough(app, "validate", "validate.py",
                 "Does a change make training ride through worse? Runs scenarios N times on a baseline and a "
                 "candidate lab and says, per figure, better, same or worse, by how much and with what confidence",
                 "Usage: mrclab validate --baseline LAB_A --candidate LAB_B SCENARIO... [--runs N]   "
                 "(mrclab validate --help for details)",
                 exit_status);
  AddPassThrough(app, "study", "study.py",
                 "Run a study at cluster scale in simulation (simulated drills over a generated fabric) and write "
                 "its table and plot to reports/studies/",
                 "Usage: mrclab study NAME [options]   (mrclab study --help lists the studies)", exit_status);
}

}  // namespace mrclab::harness
