// VM hosts in a deployed lab (`runtimes: [{runtime: vm}]`): the host's links end on taps in its
// leaves' namespaces instead of veths, qemu boots it (vm_qemu.h), and its addresses, routes,
// sysctls and rxe devices are set through the guest agent exactly as the plan gives them for
// a namespace host. Ready means verified: every other host answers on every shared plane, each
// port has its RoCEv2 GID, and an RC connection (rping, rdma_cm) works on every plane two VM
// hosts share.
//
//   deploy: PrepareVmHosts (image built or found, hashes checked; before anything is made)
//     ─► links: OpenVmTaps (the leaf's end of each host link) ─► StartVmHosts (qemu, journaled)
//     ─► ... daemons, BGP ... ─► ConfigureVmHosts (agents answer; one script per VM)
//     ─► CheckVmHosts (pings, GIDs, rping per plane) ─► ready
//   destroy: qemu is a journaled process (its taps go with it; the namespaces with the lab)
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/netns/lab_state.h"
#include "emulator/netns/namespaces.h"
#include "emulator/netns/verify.h"
#include "emulator/netns/vm_guest_image.h"
#include "emulator/netns/vm_qemu.h"
#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

bool HasVmHosts(const ResolvedLab& lab);

// The guest image ready (built on first use, hashes checked) and qemu present; throws
// InputError or std::runtime_error before anything is made.
GuestImage PrepareVmHosts(const ResolvedLab& lab, const std::function<void(const std::string&)>& stage);

// The leaf's end of each VM host link: a tap named as the leaf's interface, in the leaf's namespace.
struct VmTaps {
  std::map<std::string, std::vector<VmLaunch::Nic>> nics;  // host -> its NICs, in port order
  std::vector<Fd> fds;                                      // held until qemu has them
};
VmTaps OpenVmTaps(const ResolvedLab& lab, const std::map<std::string, Fd>& ns_fd);

// "52:54:00:HH:HH:PP": host index and port, so the guest finds each NIC by its MAC.
std::string VmMac(const ResolvedNode& host, size_t port);

void StartVmHosts(const ResolvedLab& lab, const LabPaths& paths, const GuestImage& image, const VmTaps& taps,
                  const std::map<std::string, Fd>& ns_fd, const std::map<std::string, Fd>& uts_fd, Journal& journal);

// Waits for every VM's agent, then configures each (in parallel); throws naming the VM and command.
void ConfigureVmHosts(const ResolvedLab& lab, const LabPaths& paths, std::chrono::steady_clock::time_point deadline);

// The guest's configuration script of one VM host (exposed for tests).
std::string VmHostScript(const ResolvedLab& lab, const ResolvedNode& host);

// One round of VM host verification, through the agents (bounded by their timeouts):
// reachability (every other host answers a ping on every plane they share) or rdma (every port
// has the RoCEv2 GID of its address).
enum class VmCheck { kReachability, kRdma };
CheckStatus CheckVmHosts(const ResolvedLab& lab, const LabPaths& paths, VmCheck what);

// An RC connection (rping over rdma_cm, 3 exchanges) between two VM hosts on every plane two of
// them share; returns how many planes were proven (0 when fewer than two VM hosts share one).
// Throws std::runtime_error naming the plane and hosts whose RC failed by the deadline.
int VerifyVmRc(const ResolvedLab& lab, const LabPaths& paths, std::chrono::steady_clock::time_point deadline);

// The kernel's RC between two VM hosts (`mrclab perf --transport rc` on VM hosts):
// /opt/mrclab-rdma server on dst and client on src, on the first plane they share, for
// `seconds`; the client's and the server's JSON (guest/mrclab_rdma.cc). Throws naming the host
// whose side failed.
struct KernelRcRun {
  int plane = 0;
  std::string address;  // dst's address on that plane
  nlohmann::json client, server;
};
KernelRcRun RunKernelRc(const ResolvedLab& lab, const LabPaths& paths, const std::string& src, const std::string& dst,
                        uint64_t message_bytes, double seconds);

}  // namespace mrclab::emulator::netns
