// The FRR daemons of a switch as processes: which run, how they are started (deploy and the
// faults that restart daemons share this), finding the running ones, stopping them — only
// ours, by PID — and waiting for a switch's BGP sessions.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "emulator/netns/frr_tools.h"
#include "emulator/netns/lab_state.h"
#include "emulator/netns/processes.h"
#include "emulator/netns/verify.h"
#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

// The daemons every switch of the lab runs, in start order (zebra first).
std::vector<std::string> DaemonsFor(const ResolvedLab& lab);

// The daemons a deployed switch runs, in start order: DaemonsFor(lab), plus mgmtd after zebra
// when the switch's router image has FRR 9 or later (deploy records it: NODE_DIR/daemons).
std::vector<std::string> DaemonsOf(const ResolvedLab& lab, const LabPaths& paths, const ResolvedNode& sw);
void RecordDaemons(const LabPaths& paths, const ResolvedNode& sw, const std::vector<std::string>& daemons);

// Command line of a daemon (in tools.frr_dir) whose pid file and sockets are in node_dir; on
// this machine with its configuration file there too (in a container vtysh enters it).
std::vector<std::string> DaemonArgv(const std::string& daemon, const std::string& node_dir, const FrrTools& tools);

// The command that starts these daemons of a container switch in its container, detached,
// each logging to NODE_DIR/DAEMON.out (podman exec --detach NAME /bin/sh -c '...').
std::vector<std::string> ContainerDaemonsCommand(const ResolvedLab& lab, const LabPaths& paths, const ResolvedNode& sw,
                                                 const std::vector<std::string>& daemons);

// Starts one daemon of a switch (log: NODE_DIR/DAEMON.out). A namespace switch's: inside its
// namespaces, recorded in the lab's deploy journal so that destroy stops it. A container
// switch's: podman exec in its container (destroy removes the container).
void StartDaemon(const ResolvedLab& lab, const LabPaths& paths, const ResolvedNode& sw, const std::string& daemon,
                 int netns_fd, int uts_fd, Journal& journal);

// True once the unix socket accepts connections: zebra's zserv socket, a daemon's vty socket.
bool SocketListening(const std::string& path);
bool ZebraListening(const std::string& node_dir);
bool VtyListening(const std::string& node_dir, const std::string& daemon);

// The live processes of one daemon of a switch: from its pid file and the deploy journal,
// each checked to be that daemon in that switch's namespace (IsOurs).
std::vector<OwnedProcess> RunningDaemon(const LabPaths& paths, const ResolvedNode& sw,
                                        const std::string& daemon);

// Stops those daemons of a switch (SIGTERM, SIGKILL after a grace period) and removes the
// temporary directories FRR leaves when killed.
void StopDaemons(const LabPaths& paths, const ResolvedNode& sw,
                 const std::vector<std::string>& daemons);

// Removes the /var/tmp/frr/<daemon>.<pid> directories of stopped daemons (FRR removes its own
// on a clean exit only). A daemon's last threads can still write there while its leader is
// already a zombie, which makes a removal fail (not empty): each is removed until it stays gone,
// polling for up to 5 s.
void RemoveFrrTempDirs(const std::vector<OwnedProcess>& stopped);
// The same for daemons a lab recorded that no longer exist at all (killed or crashed before a
// destroy, so nothing removed their directories). A pid that some other process has taken now
// is left alone: its directory may be that process's.
void RemoveFrrTempDirsOfExited(const std::vector<OwnedProcess>& recorded);

// Starts those of `daemons` that are not running, in DaemonsFor order; when zebra is among
// them, the others start once it listens. Returns the daemons started. Throws
// std::runtime_error naming the switch and daemon when one cannot start in time.
std::vector<std::string> StartMissingDaemons(const ResolvedLab& lab, const LabPaths& paths,
                                             const ResolvedNode& sw,
                                             const std::vector<std::string>& daemons,
                                             std::chrono::steady_clock::time_point deadline);

// The BGP sessions of one switch on the given interfaces, asked from its bgpd.
CheckStatus CheckSwitchBgp(const LabPaths& paths, const ResolvedNode& sw,
                           const std::set<std::string>& interfaces);

// Polls (no fixed sleeps) until every session of `sw` on `interfaces` is Established and the
// daemons in `watch` still run. Throws std::runtime_error saying what is missing at the
// deadline, or which daemon exited (and where its log is).
void WaitForSwitchBgp(const LabPaths& paths, const ResolvedNode& sw,
                      const std::set<std::string>& interfaces,
                      const std::vector<std::string>& watch,
                      std::chrono::steady_clock::time_point deadline);

}  // namespace mrclab::emulator::netns
