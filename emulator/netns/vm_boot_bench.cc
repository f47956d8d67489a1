// What a VM host costs on this machine: time from qemu's start until the guest agent answers,
// for one VM and for N at once, and the host memory (RSS) of each qemu. Prints the figures;
// KVM is used only where it works (vm_qemu.h: VmAccel), and the accelerator is printed.
//
//   sudo build/vm_boot_bench [N=8] [MEMORY_MIB=256]
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "emulator/netns/vm_guest_agent.h"
#include "emulator/netns/vm_initramfs.h"
#include "emulator/netns/vm_qemu.h"

namespace nx = mrclab::emulator::netns;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double RssMib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

// Boots n VMs at once; returns the seconds until each answered, and prints the round.
std::vector<double> BootRound(const nx::GuestImage& image, const std::string& dir, int n, uint32_t memory_mib) {
  const std::string initrd = dir + "/initrd.cpio";
  nx::Fd self = nx::OpenPath("/proc/self/ns/net");
  std::vector<pid_t> pids;
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    const std::string vm_dir = dir + "/vm" + std::to_string(i);
    fs::create_directories(vm_dir);
    pids.push_back(nx::StartVm(image, {"vm" + std::to_string(i), memory_mib, 1, vm_dir, initrd, {}}, self.get(), -1));
  }
  std::vector<double> ready(n);
  std::vector<std::thread> waits;
  for (int i = 0; i < n; ++i)
    waits.emplace_back([&, i] {
      nx::GuestAgent(dir + "/vm" + std::to_string(i)).WaitReady(Clock::now() + std::chrono::seconds(300));
      ready[i] = std::chrono::duration<double>(Clock::now() - start).count();
    });
  for (std::thread& t : waits) t.join();
  double rss = 0;
  for (pid_t pid : pids) rss += RssMib(pid);
  std::printf("%d VM%s at once: all answering after %.1f s (first %.1f s); qemu RSS %.0f MiB per VM\n", n,
              n == 1 ? "" : "s", *std::max_element(ready.begin(), ready.end()),
              *std::min_element(ready.begin(), ready.end()), rss / n);
  for (pid_t pid : pids) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  return ready;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::stoi(argv[1]) : 8;
  const uint32_t memory_mib = argc > 2 ? std::stoul(argv[2]) : 256;
  const nx::GuestImage image = nx::BuildGuestImage({}, [](const std::string& s) { std::fprintf(stderr, "  %s\n", s.c_str()); });
  nx::VerifyGuestImage(image);
  char dir[] = "/tmp/mrclab-vmbench-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  nx::WriteInitramfs(image, std::string(dir) + "/initrd.cpio");
  std::printf("accelerator: %s; %u MiB and 1 CPU per VM; kernel %s; %u cores on this machine\n",
              nx::VmAccel().c_str(), memory_mib, image.kernel.c_str(), std::thread::hardware_concurrency());
  BootRound(image, dir, 1, memory_mib);
  BootRound(image, dir, n, memory_mib);
  fs::remove_all(dir);
}
