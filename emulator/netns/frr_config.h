// FRRouting configuration of one switch, one file per daemon, generated from the resolved plan.
//
// bgp mode: eBGP unnumbered on every fabric interface (one peer group, remote-as external,
// BFD), connected and static routes redistributed, the switch's own uSID locator announced,
// ECMP up to 64 paths. static mode: staticd routes only (the plan's ECMP shortest paths).
// Leaves in both modes route their hosts' uSIDs with staticd.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

inline constexpr const char* kFrrDaemons[] = {"zebra", "bfdd", "staticd", "bgpd"};

// daemon name -> file contents; log files go to log_dir/<daemon>.log.
std::map<std::string, std::string> FrrConfigs(const ResolvedLab& lab, const ResolvedNode& node,
                                              const std::string& log_dir);

// The same as one integrated frr.conf, without log settings: what a switch runs by default,
// the `generated` variable of a lab's FRR templates, and the start of a user's own.
std::string GeneratedFrrConfig(const ResolvedLab& lab, const ResolvedNode& node);

// A switch with its own configuration (frr_config in the lab file), or from a router image,
// starts each of `daemons` with only its defaults, name and log file; deploy then enters the
// configuration through vtysh.
std::map<std::string, std::string> StartupFrrConfigs(const ResolvedNode& node, const std::string& log_dir,
                                                     const std::vector<std::string>& daemons);

}  // namespace mrclab::emulator::netns
