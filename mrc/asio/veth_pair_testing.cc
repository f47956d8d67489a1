#include "mrc/asio/veth_pair_testing.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace mrclab::mrc::testing {
namespace {

int Run(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

void SweepStale(const std::string& prefix) {
  DIR* d = opendir("/run/netns");
  if (!d) return;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0) Run("ip netns delete " + name);
  }
  closedir(d);
}

}  // namespace

bool CanCreateNamespaces() { return geteuid() == 0 && Run("command -v ip") == 0; }

VethNamespacePair::VethNamespacePair(const std::string& prefix, int planes, int mtu) : planes_(planes) {
  SweepStale(prefix);
  const std::string base = prefix + std::to_string(getpid());
  ns_a_ = base + "-a";
  ns_b_ = base + "-b";
  Cleanup();
  auto must = [&](const std::string& cmd) {
    if (Run(cmd) != 0) {
      Cleanup();
      throw std::runtime_error("command failed: " + cmd);
    }
  };
  must("ip netns add " + ns_a_);
  must("ip netns add " + ns_b_);
  for (const auto& ns : {ns_a_, ns_b_}) must("ip -n " + ns + " link set lo up");
  for (int p = 0; p < planes; ++p) {
    const std::string va = "mrcv" + std::to_string(p) + "a", vb = "mrcv" + std::to_string(p) + "b";
    // Created inside namespace a, so two concurrent runs never collide on interface names.
    // gso_max_segs 1 as on lab links: a GSO super-packet is cut into datagrams at the sender.
    const std::string link = " mtu " + std::to_string(mtu) + " gso_max_segs 1";
    must("ip -n " + ns_a_ + " link add " + va + link + " type veth peer name " + vb + " netns " + ns_b_ + link);
    must("ip -n " + ns_a_ + " addr add " + address_a(p) + "/64 dev " + va + " nodad");
    must("ip -n " + ns_b_ + " addr add " + address_b(p) + "/64 dev " + vb + " nodad");
    must("ip -n " + ns_a_ + " link set " + va + " up");
    must("ip -n " + ns_b_ + " link set " + vb + " up");
  }
  // IPv6 on a veth is fully up only once the kernel has processed its carrier event (linkwatch
  // may delay that up to a second) and installed the multicast route neighbour discovery needs;
  // packets sent before are lost to an INCOMPLETE neighbour for a second or more. Poll for it.
  for (int p = 0; p < planes; ++p) {
    for (const auto& [ns, dev] : {std::pair{ns_a_, "mrcv" + std::to_string(p) + "a"},
                                  std::pair{ns_b_, "mrcv" + std::to_string(p) + "b"}}) {
      const std::string probe = "ip -n " + ns + " -6 route show table local | grep -q 'multicast ff00::/8 dev " + dev + " '";
      bool up = false;
      for (int i = 0; i < 5000 && !up; ++i) {
        up = Run(probe) == 0;
        if (!up) usleep(1000);
      }
      if (!up) {
        Cleanup();
        throw std::runtime_error("IPv6 never came up on " + dev + " in " + ns);
      }
    }
  }
}

VethNamespacePair::~VethNamespacePair() { Cleanup(); }

void VethNamespacePair::Cleanup() {
  Run("ip netns delete " + ns_a_);
  Run("ip netns delete " + ns_b_);
}

std::string VethNamespacePair::address_a(int plane) const { return "fd00:99:" + std::to_string(plane) + "::1"; }
std::string VethNamespacePair::address_b(int plane) const { return "fd00:99:" + std::to_string(plane) + "::2"; }

}  // namespace mrclab::mrc::testing
