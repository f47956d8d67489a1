#include "emulator/netns/frr_reload.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "emulator/netns/frr_daemons.h"
#include "emulator/netns/frr_tools.h"
#include "emulator/netns/processes.h"

namespace mrclab::emulator::netns {
namespace {

namespace fs = std::filesystem;

std::string ReloadScript() { return FrrDir() + "/frr-reload.py"; }
std::string SavedPath(const std::string& daemon, const std::string& dir) { return dir + "/" + daemon + ".conf"; }

// The tool's output on one line: colour codes, log timestamps and blank lines dropped, lines
// joined by "; ".
std::string OneLine(const std::string& output) {
  std::string plain, line, out;
  for (size_t i = 0; i < output.size(); ++i) {
    if (output[i] == '\033') {  // ESC [ ... m
      while (i < output.size() && output[i] != 'm') ++i;
      continue;
    }
    plain += output[i];
  }
  std::istringstream in(plain);
  while (std::getline(in, line)) {
    const size_t level = line.find("ERROR: ");  // "2026-11-23 09:43:44,735   ERROR: ..."
    if (level != std::string::npos) line = line.substr(level);
    line.erase(0, line.find_first_not_of(" \t"));
    if (!line.empty()) out += (out.empty() ? "" : "; ") + line;
  }
  return out.empty() ? "(no output)" : out;
}

// frr-reload.py logged an error. With --stdout it colours the level name, so a configuration
// line that merely contains "ERROR" (a description) is not mistaken for one.
bool LoggedError(const std::string& output) { return output.find("ERROR\033[0m:") != std::string::npos; }

// frr-reload.py on the daemon's configuration; logs go to the captured output, not to
// /var/log/frr. Returns the exit status.
int RunReload(const std::string& mode, const std::string& node_dir, const std::string& daemon,
              const std::string& dir, std::string* output) {
  return RunAndWait({kPython, ReloadScript(), mode, "--stdout", "--log-level", "error", "--daemon", daemon,
                     "--bindir", "/usr/bin", "--confdir", dir, "--rundir", dir, "--vty_socket", node_dir,
                     SavedPath(daemon, dir)},
                    output);
}

}  // namespace

std::string FrrReloadProblem() {
  if (access(ReloadScript().c_str(), R_OK) != 0)
    return "FRR's reload tool " + ReloadScript() + " is missing; install the Debian package frr-pythontools, or run .ci/setup";
  if (access(kVtysh, X_OK) != 0) return std::string(kVtysh) + " is missing; install the Debian package frr";
  if (access(kPython, X_OK) != 0) return std::string(kPython) + " is missing; install the Debian package python3";
  return "";
}

void SaveRunningConfig(const std::string& node_dir, const std::string& daemon, const std::string& dir) {
  fs::create_directories(dir);
  WriteVtyshConf(dir);  // read by both tools; without it vtysh's complaint would be saved too
  std::string output;
  const int status = RunAndWait({kVtysh, "--config_dir", dir, "--vty_socket", node_dir, "-c",
                                 "show running-config " + daemon},
                                &output);
  // The configuration follows vtysh's "Current configuration:" header and ends with "end".
  const std::string header = "Current configuration:\n";
  const size_t begin = output.find(header);
  if (status != 0 || begin == std::string::npos || output.find("\nend", begin) == std::string::npos)
    throw std::runtime_error("cannot save the running configuration of " + daemon + " (vtysh exit " +
                             std::to_string(status) + "): " + OneLine(output));
  WriteFileWhole(SavedPath(daemon, dir), output.substr(begin + header.size()));
}

bool HasSavedConfig(const std::string& daemon, const std::string& dir) {
  return fs::exists(SavedPath(daemon, dir));
}

void ReloadConfig(const std::string& node_dir, const std::string& daemon, const std::string& dir) {
  std::string output;
  const int status = RunReload("--reload", node_dir, daemon, dir, &output);
  if (status != 0 || LoggedError(output))
    throw std::runtime_error("frr-reload.py could not restore the saved configuration of " + daemon + " (" +
                             SavedPath(daemon, dir) + "): " + OneLine(output));
}

std::vector<std::string> ConfigDelta(const std::string& node_dir, const std::string& daemon,
                                     const std::string& dir) {
  std::string output;
  const int status = RunReload("--test", node_dir, daemon, dir, &output);
  if (status != 0 || LoggedError(output))
    throw std::runtime_error("frr-reload.py could not compare the configuration of " + daemon +
                             " with the saved one: " + OneLine(output));
  // Sections "Lines To Delete" / "Lines To Add", each underlined, then the commands that would
  // restore the saved configuration, one per line (indented ones belong to the context above).
  std::vector<std::string> delta;
  bool in_section = false;
  std::string line;
  std::istringstream in(output);
  while (std::getline(in, line)) {
    if (line == "Lines To Delete" || line == "Lines To Add") {
      in_section = true;
    } else if (in_section && !line.empty() && line.find_first_not_of('=') != std::string::npos) {
      if (line[0] == ' ' && !delta.empty()) {
        delta.back() += " /" + line;
      } else {
        delta.push_back(line);
      }
    }
  }
  return delta;
}

}  // namespace mrclab::emulator::netns
