// "Ready means verified": polls a deployed lab until
//   1. every BGP session is Established (bgp mode; asked from each bgpd over its vty socket),
//   2. every host reaches every other host on every plane they share (UDP probes),
//   3. for every spine, one uSID path crosses that spine: the probe arrives at the far host and
//      the spine's uN behaviour counter grew (only packets steered to its uSID count there).
// Each Check*() is one bounded poll round (~100 ms at most) and reports what is still missing.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emulator/netns/lab_state.h"
#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

struct CheckStatus {
  int done = 0;
  int total = 0;
  std::vector<std::string> missing;  // a few examples of what is not there yet
  bool ok() const { return done == total; }
  CheckStatus& operator+=(const CheckStatus& other);  // keeps at most 4 examples
  std::string Summary(const std::string& what) const;  // "bgp 126/128 (p0-leaf1:spine0 Active, ...)"
};

class LabVerifier {
 public:
  LabVerifier(const ResolvedLab& lab, const LabPaths& paths);
  ~LabVerifier();
  CheckStatus CheckBgp();
  CheckStatus CheckReachability();
  CheckStatus CheckSpinePaths();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// BGP sessions of one switch: peer (interface) -> state, from `show bgp summary json`.
std::map<std::string, std::string> BgpPeerStates(const std::string& bgpd_vty_socket);

}  // namespace mrclab::emulator::netns
