// The fault vocabulary: one table of fault kinds, shared by scenario files, `mrclab fault`, the
// Python module and every backend, and FaultAction, one fault on one target as data. Pure:
// validation and descriptions need only the resolved lab.
//
//   kind           target        what it does                                  netns  ns3
//   link_down      link          both ends of the link down (routing sees it)   yes    yes
//   flap           link          link_down windows: count x (down, up)          yes    yes
//   blackhole      link          carrier kept, receiving end(s) drop everything yes    yes
//   loss           link          receiving end(s) drop a random fraction        yes    yes
//   rate           link          the link's rate replaced                       yes    yes
//   switch_down    switch        every link of the switch down, daemons stopped yes    yes
//   plane_down     plane         every host port of the plane down              yes    yes
//   bgp_reset      switch        `clear bgp *`, or bgpd restarted               yes    no
//   config_change  switch        lines entered into one FRR daemon              yes    no
//   ev_deny        host pair     the job's MRC endpoints stop using some EVs    yes    yes
//   port_disable   host, plane   the job's endpoints stop using a NIC port      yes    yes
//
// flap is planned into link_down windows; ev_deny and port_disable act on the job's
// controller, not on the fabric; the rest are FaultActions a backend applies and reverts.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/errors.h"
#include "emulator/resolved_lab.h"

namespace mrclab::emulator {

// A fault that is invalid (unknown target, a line FRR refuses: kInput) or that could not be
// applied or reverted (kOperation, the default).
class FaultError : public Error {
 public:
  explicit FaultError(const std::string& what, ErrorKind kind = ErrorKind::kOperation) : Error(kind, what) {}
};

enum class FaultKind {
  kLinkDown,
  kFlap,
  kBlackhole,
  kLoss,
  kRate,
  kSwitchDown,
  kPlaneDown,
  kBgpReset,
  kConfigChange,
  kEvDeny,
  kPortDisable,
};

enum class FaultTarget { kLink, kSwitch, kPlane, kHostPair, kHostPort };
enum class BackendKind { kNetns, kNs3 };
std::string_view ToString(BackendKind b);                      // "netns", "ns3"
std::optional<BackendKind> ParseBackend(std::string_view text);  // the same words

struct FaultKindInfo {
  FaultKind kind;
  std::string_view name;
  FaultTarget target;
  bool controller;  // acts on the job's MRC endpoints, not on the fabric
  bool netns, ns3;  // which backends can apply it
  std::string_view summary;
};

// Every kind, in the order of the table above.
std::span<const FaultKindInfo> FaultKinds();
const FaultKindInfo& Info(FaultKind kind);
std::string_view ToString(FaultKind kind);
std::optional<FaultKind> ParseFaultKind(std::string_view text);
std::string FaultKindNames();  // "link_down, flap, ..." for messages
bool Supports(BackendKind backend, FaultKind kind);

// Relative to ResolvedLink a/b: kAToB drops what a sends to b (at b's ingress).
enum class Direction { kBoth, kAToB, kBToA };
std::string_view ToString(Direction direction);                  // "both", "a-b", "b-a"
std::optional<Direction> ParseDirection(std::string_view text);  // the same words

// One fault on one target, as a backend applies it (kinds that are not controller kinds and
// not flap).
struct FaultAction {
  FaultKind kind = FaultKind::kLinkDown;
  int link = -1;           // link_down, blackhole, loss, rate: index into ResolvedLab::links
  std::string node;        // switch_down, bgp_reset, config_change: a switch name
  int plane = -1;          // plane_down
  Direction direction = Direction::kBoth;  // blackhole, loss
  double loss_rate = 0;    // loss: probability 0..1 (resolution 1e-4)
  uint64_t rate_bps = 0;   // rate: new rate of the link (both ends)
  std::string bgp_mode = "clear";  // bgp_reset: "clear" or "restart"
  // config_change: lines entered in `configure terminal` of the daemon that owns the first
  // line (ConfigDaemon). The revert enters revert_lines (optional), then reloads the
  // daemon's configuration saved at apply (frr-reload.py) and checks that nothing differs.
  std::vector<std::string> config_lines;
  std::vector<std::string> revert_lines;

  // "blackhole p0-leaf0:spine0 <-> p0-spine0:leaf0 (both directions)"
  std::string Describe(const ResolvedLab& lab) const;
  // Only the fields the kind uses, plus "kind"; FromJson throws FaultError naming the field.
  nlohmann::json ToJson() const;
  static FaultAction FromJson(const nlohmann::json& doc);
};

// Throws FaultError naming the field and the reason when the action does not fit the lab:
// a kind that is not a fabric action, unknown link, node not a switch, plane out of range,
// rate 0, loss outside 0..1, a BGP fault on a static lab, config lines that span daemons, ...
void ValidateFault(const ResolvedLab& lab, const FaultAction& action);

// Why a rate fault of `rate_bps` does not slow the lab's links ("" when it does): a rate at or
// above the lab's link_rate would leave a link as fast or make it faster. Unshaped labs take any.
std::string RateFaultProblem(const ResolvedLab& lab, uint64_t rate_bps);

// The FRR daemon that owns a configuration line, by its first words (a leading "no " is
// ignored): "router bgp", "bgp ...", "ip|ipv6 as-path|community-list|...", "route-map",
// "ip|ipv6 prefix-list", "access-list" -> bgpd; "ip route", "ipv6 route" -> staticd;
// "bfd" -> bfdd; anything else ("interface", ...) -> zebra.
std::string ConfigDaemon(const std::string& line);

// "p0-leaf0:spine0" (node:interface, either end of the link), "p0-leaf0--p0-spine0" (the one
// link between two nodes) or a link index ("7") -> link index. Throws FaultError naming the
// target and why it does not name a link.
int ResolveLinkTarget(const ResolvedLab& lab, const std::string& target);

}  // namespace mrclab::emulator
