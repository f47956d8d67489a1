#include "emulator/netns/kernel_srv6.h"

#include <sched.h>

#include <mutex>
#include <thread>

#include "emulator/netns/netlink.h"

namespace mrclab::emulator::netns {

std::optional<std::string> KernelSrv6Missing() {
  static std::once_flag once;
  static std::optional<std::string> missing;
  std::call_once(once, [] {
    std::thread probe([] {
      if (unshare(CLONE_NEWNET) != 0) return;  // not root: cannot tell (deploy says why)
      try {
        RtnlSocket rtnl;
        const int lo = rtnl.LinkIndexes().at("lo");
        rtnl.QueueLinkUp("lo");
        rtnl.QueueUsidEnd("fcbb:0:1::/48", lo, 32, 16);
        rtnl.Flush();
      } catch (const NetlinkError& e) {
        // Only the kernel's own refusal says it lacks SRv6; anything else is left to deploy.
        if (std::string(e.what()).find("not supported") != std::string::npos) missing = e.what();
      } catch (const std::exception&) {
      }
    });
    probe.join();
  });
  return missing;
}

}  // namespace mrclab::emulator::netns
