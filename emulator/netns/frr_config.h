// FRRouting configuration of one switch, one file per daemon, generated from the resolved plan.
//
// bgp mode: eBGP unnumbered on every fabric interface (one peer group, remote-as external,
// BFD), connected and static routes redistributed, the switch's own uSID locator announced,
// ECMP up to 64 paths. static mode: staticd routes only (the plan's ECMP shortest paths).
// Leaves in both modes route their hosts' uSIDs with staticd.
#pragma once

#include <map>
#include <string>

#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

inline constexpr const char* kFrrDaemons[] = {"zebra", "bfdd", "staticd", "bgpd"};

// daemon name -> file contents; log files go to log_dir/<daemon>.log.
std::map<std::string, std::string> FrrConfigs(const ResolvedLab& lab, const ResolvedNode& node,
                                              const std::string& log_dir);

}  // namespace mrclab::emulator::netns
