// LabObserver: watches a deployed lab from a thread of its own, polling every `interval`:
//   - BGP sessions of every switch (bgp-mode labs): `show bgp summary json` over bgpd's vty
//     socket (<state dir>/nodes/NODE/bgpd.vty);
//   - BFD peers of every switch: `show bfd peers json` over bfdd's vty socket;
//   - packet and drop counters of every link end: one rtnetlink socket per node namespace,
//     opened once (and again if the namespace is replaced), fed to DrillMetrics when given.
// The first poll is the baseline. From then on every change of a session's state is an event:
//   {"t": <unix seconds>, "type": "bgp"|"bfd", "node": "p0-leaf0", "peer": "spine0",
//    "from": "Established", "to": "Idle"}
// where peer is FRR's name of the session (the interface for BGP unnumbered; for BFD the
// interface when the session has one, else the peer address, which then also is in "address").
// Besides FRR's own states, "unreachable" means the daemon did not answer its vty socket (all
// sessions of that node go there; a node that has no known session gives one event without
// "peer"), and "absent" means the session is not (or no longer) in the daemon's list.
// Problems of a poll (a namespace gone, unparsable output) never leave the thread; they become
//   {"t": ..., "type": "observer_error", "node": "p0-leaf0", "error": "..."}
// at most once per node and distinct error text. on_event runs on the observer thread.
// Stop the observer before destroying the lab: its sockets keep the namespaces alive.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/netns/netlink.h"
#include "emulator/resolved_lab.h"

namespace mrclab::harness {

class DrillMetrics;

struct ObserverOptions {
  std::chrono::milliseconds interval{250};
  bool bgp = true, bfd = true, links = true;
};

// The poll interval for a lab: 250 ms, longer for labs of many switches so that the observer
// asks the routing daemons at most kMaxDaemonQueriesPerSecond questions a second (two per
// switch per poll: 250 ms up to 32 switches, 750 ms for clos4's 48). Each question wakes a
// daemon and has it print JSON: on a big lab, at 4 Hz, that took the CPU the job needed.
inline constexpr int kMaxDaemonQueriesPerSecond = 128;
std::chrono::milliseconds PollInterval(const emulator::ResolvedLab& lab);

class LabObserver {
 public:
  // The lab is copied; its state directory is emulator::netns::LabPaths(lab.name). metrics may
  // be null: link counters are then only kept for LastLinkSamples().
  LabObserver(const emulator::ResolvedLab& lab, ObserverOptions options,
              std::function<void(const nlohmann::json&)> on_event, DrillMetrics* metrics);
  ~LabObserver();  // stops and joins
  LabObserver(const LabObserver&) = delete;
  LabObserver& operator=(const LabObserver&) = delete;

  void Start();  // starts the polling thread (no-op when running)
  void Stop();   // stops and joins it (no-op when stopped); Start() may follow

  struct LinkSample {
    int link = -1;    // index into ResolvedLab::links
    std::string end;  // "node:interface"
    emulator::netns::LinkCounters counters;
  };
  // The link ends read by the last poll that could read them (thread-safe snapshot).
  std::vector<LinkSample> LastLinkSamples() const;
  uint64_t polls() const;  // completed polls

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// BFD sessions of one switch, named as in the observer's events (interface, else peer address)
// -> status ("up", "down", "init", ...), from `show bfd peers json` over bfdd's vty socket
// (<state dir>/nodes/NODE/bfdd.vty). Throws emulator::netns::VtyError when bfdd does not
// answer, std::runtime_error when the answer cannot be read.
std::map<std::string, std::string> BfdPeerStates(const std::string& bfdd_vty_socket);

}  // namespace mrclab::harness
