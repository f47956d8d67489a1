// The one timer of a real-time endpoint (AsioEndpoint, RelayEndpoint): armed for the Context's
// next timeout, and re-armed only when that is earlier than the wait already armed (a
// superseded wait is aborted by expires_at and its handler sees the error).
#pragma once

#include <chrono>
#include <utility>

#include <boost/asio/steady_timer.hpp>

#include "mrc/core/units.h"

namespace mrclab::mrc {

// Calls on_time() when `deadline` (steady-clock time) comes, unless the wait is superseded or
// cancelled; `armed_at` is the deadline armed, which on_time should reset to Infinite.
template <class OnTime>
void ArmEndpointTimer(boost::asio::steady_timer& timer, Timestamp deadline, Timestamp& armed_at, OnTime on_time) {
  if (deadline.IsInfinite() || deadline >= armed_at) return;
  armed_at = deadline;
  timer.expires_at(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deadline.nanoseconds())));
  timer.async_wait([on_time = std::move(on_time)](const boost::system::error_code& ec) {
    if (!ec) on_time();
  });
}

}  // namespace mrclab::mrc
