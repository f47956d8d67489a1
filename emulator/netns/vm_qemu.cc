#include "emulator/netns/vm_qemu.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <stdexcept>

#include "emulator/netns/processes.h"
#include "emulator/netns/vm_guest_agent.h"
#include "emulator/netns/vm_qmp.h"

namespace mrclab::emulator::netns {

std::string VmAccel() {
  if (const char* forced = getenv("MRCLAB_VM_ACCEL"); forced && *forced) return forced;
  if (access("/dev/kvm", R_OK | W_OK) != 0) return "tcg";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("flags", 0) == 0)
      return line.find(" vmx") != std::string::npos || line.find(" svm") != std::string::npos ? "kvm" : "tcg";
  return "tcg";
}

uint64_t VmOverheadMib(const std::string& accel) { return 16 + (accel == "tcg" ? kTcgCodeCacheMib : 0); }

Fd OpenTap(int netns_fd, const std::string& name, uint32_t mtu) {
  int fd = -1, err = 0;
  InNetns(netns_fd, [&] {
    fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      err = errno;
      return;
    }
    ifreq ifr{};
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
    if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
      err = errno;
      return;
    }
    int sock = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ifr.ifr_mtu = static_cast<int>(mtu);
    if (sock < 0 || ioctl(sock, SIOCSIFMTU, &ifr) != 0) err = errno;
    if (sock >= 0) close(sock);
  });
  Fd tap(fd);
  if (err) throw std::runtime_error("tap " + name + ": " + std::strerror(err));
  return tap;
}


std::string GuestToolsDir() { return MRCLAB_GUEST_TOOLS_DIR; }

std::vector<std::string> QemuArgv(const GuestImage& image, const VmLaunch& vm, const std::string& accel) {
  std::vector<std::string> argv = {
      "/usr/bin/qemu-system-x86_64", "-name", vm.hostname,
      "-M", "q35", "-accel", accel == "tcg" ? "tcg,tb-size=" + std::to_string(kTcgCodeCacheMib) : accel,
      "-cpu", accel == "kvm" ? "host" : "max",
      "-m", std::to_string(vm.memory_mib), "-smp", std::to_string(vm.cpus),
      "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
      "-bios", "/usr/share/qemu/qboot.rom", "-kernel", image.Vmlinux(), "-initrd", vm.initrd,
      "-append", "console=ttyS0 quiet panic=-1 mrclab.hostname=" + vm.hostname,
      "-serial", "file:" + vm.dir + "/console.log",
      "-fsdev", "local,id=root,path=" + image.Rootfs() + ",security_model=none,readonly=on",
      "-device", "virtio-9p-pci,fsdev=root,mount_tag=rootfs",
      "-fsdev", "local,id=tools,path=" + GuestToolsDir() + ",security_model=none,readonly=on",
      "-device", "virtio-9p-pci,fsdev=tools,mount_tag=mrclab",
      "-device", "virtio-serial-pci",
      "-qmp", "unix:" + QmpSocketPath(vm.dir) + ",server=on,wait=off"};  // link faults: vm_qmp.h
  for (int port = 0; port < kAgentPorts; ++port) {
    const std::string id = "agent" + std::to_string(port);
    argv.insert(argv.end(), {"-chardev", "socket,id=" + id + ",path=" + AgentSocketPath(vm.dir, port) + ",server=on,wait=off",
                             "-device", "virtserialport,chardev=" + id + ",name=mrclab.agent." + std::to_string(port)});
  }
  for (size_t i = 0; i < vm.nics.size(); ++i) {
    const std::string id = "nic" + std::to_string(i);
    argv.insert(argv.end(), {"-netdev", "tap,id=" + id + ",fd=" + std::to_string(3 + i), "-device",
                             "virtio-net-pci,netdev=" + id + ",mac=" + vm.nics[i].mac});
  }
  return argv;
}

pid_t StartVm(const GuestImage& image, const VmLaunch& vm, int netns_fd, int uts_fd) {
  if (access("/usr/bin/qemu-system-x86_64", X_OK) != 0)
    throw std::runtime_error("qemu is missing: VM hosts need the Debian package qemu-system-x86 (run .ci/setup)");
  std::vector<int> fds;
  for (const VmLaunch::Nic& nic : vm.nics) fds.push_back(nic.tap_fd);
  return StartInNamespaces(QemuArgv(image, vm, VmAccel()), netns_fd, uts_fd, vm.dir + "/qemu.log", fds);
}

}  // namespace mrclab::emulator::netns
