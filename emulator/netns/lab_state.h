// On-disk state of a deployed lab under /run/mrclab/NAME/:
//   lab.json     the resolved plan plus deploy metadata and state (deploying|ready|failed)
//   journal      one line per kernel object or process deploy made, written BEFORE making it,
//                so that destroy (even after SIGKILL of the deployer) removes exactly those
//   nodes/NODE/  FRR configs, pid files, vty sockets, logs of switch NODE
//   uts/NODE     bind mount of NODE's UTS namespace
// Journal lines:  "netns NAME"  |  "process PID NETNS_NAME WHAT"  (WHAT: zebra, bgpd, ...)
//                 |  "container NAME"  (a switch from a router image: container_switch.h)
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include <nlohmann/json.hpp>

namespace mrclab::emulator::netns {

std::string StateRoot();  // /run/mrclab, or $MRCLAB_STATE_DIR when set

struct LabPaths {
  explicit LabPaths(const std::string& lab_name);
  std::string root, lab_json, journal;
  std::string NodeDir(const std::string& node) const { return root + "/nodes/" + node; }
  std::string UtsPath(const std::string& node) const { return root + "/uts/" + node; }
};

struct JournalEntry {
  std::string kind;  // "netns" | "process" | "container"
  std::string netns;
  pid_t pid = 0;
  std::string what;  // process: zebra, bgpd...; container: its name
};

class Journal {
 public:
  explicit Journal(const std::string& path);  // opens for append (creates)
  ~Journal();
  void RecordNetns(const std::string& netns);
  void RecordProcess(pid_t pid, const std::string& netns, const std::string& what);
  void RecordContainer(const std::string& name);
  static std::vector<JournalEntry> Read(const std::string& path);

 private:
  void Append(const std::string& line);
  int fd_ = -1;
};

// Names of the labs that have a state directory.
std::vector<std::string> ListLabs();
nlohmann::json ReadLabJson(const std::string& lab_name);  // throws if not deployed
void WriteLabJson(const std::string& lab_name, const nlohmann::json& doc);  // atomic rename

}  // namespace mrclab::emulator::netns

#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

// The plan of a deployed lab, resolved again from the lab file text saved at deploy time
// (root/lab.yaml), so that every command sees exactly what was deployed.
ResolvedLab LoadDeployedLab(const std::string& lab_name);
void SaveLabText(const std::string& lab_name, const std::string& yaml_text);

}  // namespace mrclab::emulator::netns
