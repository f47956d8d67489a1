// Router Solicitations (RFC 4861 §6.3.7) sent from a switch's own ports: every FRR neighbour
// on the link answers with a Router Advertisement at once, which is how an unnumbered BGP
// session learns its peer's link-local address without waiting for the next periodic one.
#pragma once

#include <string>
#include <vector>

namespace mrclab::emulator::netns {

// Sends one Router Solicitation to ff02::2 out of each of `interfaces` of the namespace.
// Best effort: returns how many were sent (an interface that is gone or down is skipped).
int SendRouterSolicitations(const std::string& netns, const std::vector<std::string>& interfaces);

}  // namespace mrclab::emulator::netns
