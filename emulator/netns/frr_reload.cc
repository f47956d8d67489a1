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

std::string ReloadScript() { return FrrDir() + "/frr-reload.py"; }  // this machine's
// "" as the daemon: the whole integrated configuration (every daemon's), saved as frr.conf.
std::string SavedPath(const std::string& daemon, const std::string& dir) {
  return dir + "/" + (daemon.empty() ? "frr" : daemon) + ".conf";
}
std::string Whose(const std::string& daemon) { return daemon.empty() ? "every daemon" : daemon; }

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
int RunReload(const FrrTools& tools, const std::string& mode, const std::string& node_dir, const std::string& daemon,
              const std::string& dir, std::string* output) {
  std::vector<std::string> args = {tools.frr_dir + "/frr-reload.py", mode, "--stdout", "--log-level", "error"};
  if (!daemon.empty()) args.insert(args.end(), {"--daemon", daemon});
  args.insert(args.end(), {"--bindir", "/usr/bin", "--confdir", dir, "--rundir", dir, "--vty_socket", node_dir,
                           SavedPath(daemon, dir)});
  return RunAndWait(tools.Command(kPython, args), output);
}

}  // namespace

std::string FrrReloadProblem() {
  if (access(ReloadScript().c_str(), R_OK) != 0)
    return "FRR's reload tool " + ReloadScript() + " is missing; install the Debian package frr-pythontools, or run .ci/setup";
  if (access(kVtysh, X_OK) != 0) return std::string(kVtysh) + " is missing; install the Debian package frr";
  if (access(kPython, X_OK) != 0) return std::string(kPython) + " is missing; install the Debian package python3";
  return "";
}

// Empty "interface NAME" stanzas for those of `interfaces` the configuration has none for.
// frr-reload.py of FRR 10.2 to 10.5 removes a stanza that only the saved configuration lacks with
// "no interface NAME", which FRR refuses for an interface that exists ("only inactive
// interfaces can be deleted"; FRR issue 20355); with an empty stanza saved it enters the "no"
// of each line instead, as earlier and later versions do.
std::string WithInterfaceStanzas(std::string config, const std::vector<std::string>& interfaces) {
  std::string stanzas;
  for (const std::string& itf : interfaces)
    if (config.find("\ninterface " + itf + "\n") == std::string::npos) stanzas += "interface " + itf + "\nexit\n!\n";
  const size_t end = config.rfind("\nend");
  if (stanzas.empty() || end == std::string::npos) return config;
  return config.insert(end + 1, stanzas);
}

void SaveRunningConfig(const FrrTools& tools, const std::string& node_dir, const std::string& daemon,
                       const std::string& dir, const std::vector<std::string>& interfaces) {
  fs::create_directories(dir);
  WriteVtyshConf(dir);  // read by both tools; without it vtysh's complaint would be saved too
  std::string output;
  const int status = RunAndWait(
      tools.Command(kVtysh, {"--config_dir", dir, "--vty_socket", node_dir, "-c",
                             "show running-config" + (daemon.empty() ? "" : " " + daemon)}),
      &output);
  // The configuration follows vtysh's "Current configuration:" header and ends with "end".
  const std::string header = "Current configuration:\n";
  const size_t begin = output.find(header);
  if (status != 0 || begin == std::string::npos || output.find("\nend", begin) == std::string::npos)
    throw std::runtime_error("cannot save the running configuration of " + Whose(daemon) + " (vtysh exit " +
                             std::to_string(status) + "): " + OneLine(output));
  WriteFileWhole(SavedPath(daemon, dir), WithInterfaceStanzas(output.substr(begin + header.size()), interfaces));
}

bool HasSavedConfig(const std::string& daemon, const std::string& dir) {
  return fs::exists(SavedPath(daemon, dir));
}

void ReloadConfig(const FrrTools& tools, const std::string& node_dir, const std::string& daemon,
                  const std::string& dir) {
  std::string output;
  const int status = RunReload(tools, "--reload", node_dir, daemon, dir, &output);
  if (status != 0 || LoggedError(output))
    throw std::runtime_error("frr-reload.py could not restore the saved configuration of " + Whose(daemon) + " (" +
                             SavedPath(daemon, dir) + "): " + OneLine(output));
}

std::vector<std::string> ConfigDelta(const FrrTools& tools, const std::string& node_dir, const std::string& daemon,
                                     const std::string& dir) {
  std::string output;
  const int status = RunReload(tools, "--test", node_dir, daemon, dir, &output);
  if (status != 0 || LoggedError(output))
    throw std::runtime_error("frr-reload.py could not compare the configuration of " + Whose(daemon) +
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
    } else if (in_section && !line.empty() && line.find_first_not_of('=') != std::string::npos && line != "exit") {
      // (FRR 10 closes each context with "exit": not a command still needed.)
      if (line[0] == ' ' && !delta.empty()) {
        delta.back() += " /" + line;
      } else {
        delta.push_back(line);
      }
    }
  }
  // An empty interface stanza (WithInterfaceStanzas) is never shown by a running configuration.
  std::erase_if(delta, [](const std::string& l) { return l.rfind("interface ", 0) == 0 && l.find(" /") == std::string::npos; });
  return delta;
}

}  // namespace mrclab::emulator::netns
