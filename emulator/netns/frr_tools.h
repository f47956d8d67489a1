// The FRR command-line tools mrclab runs beside a switch's daemons (vtysh, frr-reload.py under
// python3), where they run, and the files they read.
#pragma once

#include <string>
#include <vector>

#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

inline constexpr const char* kVtysh = "/usr/bin/vtysh";
inline constexpr const char* kPython = "/usr/bin/python3";

// Where FRR's daemons are on this machine; MRCLAB_FRR_DIR overrides /usr/lib/frr.
std::string FrrDir();

// A switch's FRR tools: this machine's for a namespace switch; for a switch from a router image
// those of its image, run inside its container (podman exec), so that vtysh and frr-reload.py
// always speak the FRR version of the daemons they talk to. The lab's state folder is at the
// same path in both (container_switch.h), so the same file paths serve.
struct FrrTools {
  std::vector<std::string> prefix;  // empty, or {podman ..., "exec", CONTAINER}
  std::string frr_dir;              // the daemons and frr-reload.py
  bool in_container = false;
  // prefix + {program} + args.
  std::vector<std::string> Command(const std::string& program, const std::vector<std::string>& args) const;
};
FrrTools ToolsOf(const std::string& lab_name, const ResolvedNode& sw);

// DIR/vtysh.conf: vtysh's own settings (the integrated configuration), for vtysh --config_dir
// DIR, so that the machine's /etc/frr/vtysh.conf plays no part and vtysh does not complain
// about a missing one on every run (which would end up in what it prints).
void WriteVtyshConf(const std::string& dir);

// The file written whole, then renamed into place; throws std::runtime_error naming it.
void WriteFileWhole(const std::string& path, const std::string& text);

}  // namespace mrclab::emulator::netns
