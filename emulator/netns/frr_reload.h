// A daemon's running configuration saved before a config_change, and put back afterwards with
// FRR's own reload tool (frr-reload.py, Debian package frr-pythontools), which computes the
// commands that turn the running configuration into the saved one ("no shutdown" for a
// "shutdown", the removal of an added neighbor, ...) and enters them through vtysh.
//
//   SaveRunningConfig   vtysh --vty_socket NODE_DIR -c 'show running-config DAEMON'
//                       -> DIR/DAEMON.conf (written whole, then renamed into place)
//   ReloadConfig        frr-reload.py --reload --daemon DAEMON ... DIR/DAEMON.conf
//   ConfigDelta         frr-reload.py --test: the commands still needed ([] = restored)
//
// DAEMON "" is the whole integrated configuration (DIR/frr.conf, no --daemon): what FRR 9 and
// later need for interfaces and static routes, which mgmtd holds for zebra and staticd.
//
// The tools are the switch's (frr_tools.h): this machine's, or its router image's in its
// container. They only talk to the daemons' vty sockets in the node directory. DIR also holds the vtysh.conf both tools read, so that the machine's own
// /etc/frr/vtysh.conf plays no part and nothing is written to /etc/frr or /var/log/frr.
// Each call throws std::runtime_error naming the daemon and what the tool said.
#pragma once

#include <string>
#include <vector>

#include "emulator/netns/frr_tools.h"

namespace mrclab::emulator::netns {

// "" when frr-reload.py and vtysh can be run; else why not and which package brings them.
std::string FrrReloadProblem();

// `interfaces`: the switch's, each given a stanza (empty if it has no configuration) so that
// frr-reload.py never tries to delete an interface that exists (FRR 10.2 to 10.5).
void SaveRunningConfig(const FrrTools& tools, const std::string& node_dir, const std::string& daemon,
                       const std::string& dir, const std::vector<std::string>& interfaces = {});

// True once SaveRunningConfig finished for this daemon in dir.
bool HasSavedConfig(const std::string& daemon, const std::string& dir);

void ReloadConfig(const FrrTools& tools, const std::string& node_dir, const std::string& daemon,
                  const std::string& dir);

// The commands that would still be needed to restore the saved configuration, as frr-reload.py
// --test prints them ("interface spine0 / no shutdown"); empty once the daemon runs it.
std::vector<std::string> ConfigDelta(const FrrTools& tools, const std::string& node_dir, const std::string& daemon,
                                     const std::string& dir);

}  // namespace mrclab::emulator::netns
