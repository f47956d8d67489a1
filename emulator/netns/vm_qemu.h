// Booting a VM host: qemu with the guest image's kernel (PVH entry, qboot), mrclab's initramfs,
// the root filesystem read-only over virtio-9p, the guest agent's virtio-serial port as a unix
// socket, and one virtio-net NIC per plane backed by a tap device made in the leaf's namespace.
//
//   OpenTap(leaf namespace, leaf's interface name) ─► fd ─┐
//   StartVm ─► qemu-system-x86_64 … -netdev tap,fd=3 … ◄──┘  (the tap lives as long as qemu:
//              it is not persistent, so a killed VM leaves no device behind)
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/netns/namespaces.h"
#include "emulator/netns/vm_guest_image.h"

namespace mrclab::emulator::netns {

// "kvm" where hardware virtualisation works (/dev/kvm and the CPU's vmx or svm flag), else "tcg"
// (software emulation, as on these machines: their /dev/kvm is a paravirtual hypervisor that
// cannot run Debian's kernels). $MRCLAB_VM_ACCEL=kvm|tcg overrides.
std::string VmAccel();

// TCG's translated-code cache per VM. qemu's default (1 GiB, or an eighth of the host's memory)
// grew a 256 MiB guest's qemu to 1 GiB of RSS under perftest; a small guest needs far less.
inline constexpr uint32_t kTcgCodeCacheMib = 64;
// What a VM costs the host beyond its guest memory: qemu itself (~16 MiB measured) and, under
// TCG, its code cache.
uint64_t VmOverheadMib(const std::string& accel);

// A tap device named `name` in the namespace of `netns_fd`, up to `mtu`; gone when its last fd closes.
Fd OpenTap(int netns_fd, const std::string& name, uint32_t mtu);

struct VmLaunch {
  std::string hostname;
  uint32_t memory_mib = 256, cpus = 1;
  std::string dir;     // console.log, qemu.log, agent.N.sock (vm_guest_agent.h), qmp.sock (vm_qmp.h)
  std::string initrd;  // vm_initramfs.h
  struct Nic {
    int tap_fd = -1;
    std::string mac;   // "52:54:00:00:01:02"
  };
  std::vector<Nic> nics;
};

inline constexpr const char* kQemuComm = "qemu-system-x86";  // its /proc/PID/comm (15 characters)
// mrclab's tools for the guests (guest-tools/ of the build: mrclab-rdma), shared read-only with
// every VM (9p tag "mrclab", mounted at /opt).
std::string GuestToolsDir();
std::vector<std::string> QemuArgv(const GuestImage& image, const VmLaunch& vm, const std::string& accel);

// Starts qemu in the VM host's namespaces (as a routing daemon is started: processes.h); returns
// its PID once it runs. Its command line names vm.dir, so destroy finds it even unjournaled.
pid_t StartVm(const GuestImage& image, const VmLaunch& vm, int netns_fd, int uts_fd);

}  // namespace mrclab::emulator::netns
