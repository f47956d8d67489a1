// The FRR command-line tools mrclab runs beside a switch's daemons (vtysh, frr-reload.py under
// python3), and the files they read.
#pragma once

#include <string>

namespace mrclab::emulator::netns {

inline constexpr const char* kVtysh = "/usr/bin/vtysh";
inline constexpr const char* kPython = "/usr/bin/python3";

// DIR/vtysh.conf: vtysh's own settings (the integrated configuration), for vtysh --config_dir
// DIR, so that the machine's /etc/frr/vtysh.conf plays no part and vtysh does not complain
// about a missing one on every run (which would end up in what it prints).
void WriteVtyshConf(const std::string& dir);

// The file written whole, then renamed into place; throws std::runtime_error naming it.
void WriteFileWhole(const std::string& path, const std::string& text);

}  // namespace mrclab::emulator::netns
