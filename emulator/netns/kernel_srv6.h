// Whether this kernel can forward SRv6 uSIDs the way a lab's switches do (seg6local End with
// the NEXT-C-SID flavor, counters on). Kernels built without CONFIG_IPV6_SEG6_LWTUNNEL refuse
// every seg6local route ("lwt encapsulation type not supported"); on them no lab can deploy.
//
// Probed once per process by installing one such route in a throwaway network namespace that
// only a helper thread enters (it goes away with the thread: nothing is left behind).
#pragma once

#include <optional>
#include <string>

namespace mrclab::emulator::netns {

// Why this kernel cannot forward SRv6 uSIDs (it refused the route as not supported), or
// nothing when it can or when that cannot be told here (not root, any other error).
std::optional<std::string> KernelSrv6Missing();

}  // namespace mrclab::emulator::netns
