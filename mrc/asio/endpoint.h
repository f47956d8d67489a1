// What a real-time driver (harness/job/training_job.cc) needs of a host's MRC endpoint, whichever
// way its datagrams reach the fabric: AsioEndpoint (UDP sockets in the host's network namespace)
// or RelayEndpoint (a byte stream to a relay that owns the sockets: a VM host's guest). Both
// run one Context on one boost::asio::io_context thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "mrc/core/context.h"
#include "mrc/core/ev_route.h"

namespace mrclab::mrc {

class Endpoint {
 public:
  virtual ~Endpoint() = default;
  virtual Context& context() = 0;
  // Routes of QP `qpn`: routes[i] serves EV id i.
  virtual void SetRoutes(uint32_t qpn, const std::vector<EvRoute>& routes) = 0;
  // Called on the io thread after every batch of input or timer work, before transmitting:
  // the place to poll CQs and post new work.
  virtual void SetOnProgress(std::function<void()> fn) = 0;
  virtual void Start() = 0;
  virtual void Stop() = 0;
  // Transmit what the core has and re-arm the timer; call after posting work on the io thread.
  virtual void Kick() = 0;
};

// The seed of an endpoint's QPNs, rkeys and initial PSNs: the one given (a replay), else drawn
// from the kernel's entropy (getrandom), so that no other host can predict them.
uint64_t KeySeedOrEntropy(const std::optional<uint64_t>& key_seed);

}  // namespace mrclab::mrc
