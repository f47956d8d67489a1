#include "mrc/core/qp_presets.h"

#include <algorithm>

namespace mrclab::mrc {
namespace {

// QpConfig's defaults with the transport, the EVs (EV i on ev_planes[i]) and the MTU. A packet
// may meet a dead EV on each try until the EVs of a failed plane or spine are all marked; give
// it at least as many tries as there are EVs.
QpConfig BaseConfig(TransportMode transport, const std::vector<int>& ev_planes, uint32_t mtu) {
  QpConfig q;
  q.mode = transport;
  q.evs.clear();
  for (size_t i = 0; i < ev_planes.size(); ++i) q.evs.push_back({static_cast<uint16_t>(i), ev_planes[i]});
  q.mtu = mtu;
  q.max_retransmissions = std::max<uint32_t>(q.max_retransmissions, static_cast<uint32_t>(ev_planes.size()));
  return q;
}

}  // namespace

QpConfig RealtimeQpConfig(TransportMode transport, const std::vector<int>& ev_planes, uint32_t mtu) {
  QpConfig q = BaseConfig(transport, ev_planes, mtu);
  q.rto.initial_rto = Duration::Milliseconds(10);
  q.rto.min_rto = Duration::Milliseconds(25);
  q.rto.max_rto = Duration::Milliseconds(200);
  q.rc_ack_timeout = Duration::Milliseconds(8);
  q.reorder_window_min = Duration::Milliseconds(10);
  q.reorder_window_rtt_fraction = 0.5;
  q.ack_delay = Duration::Microseconds(50);
  q.ack_request_every = 8;
  q.ev_policy.penalty_floor = Duration::Microseconds(500);
  q.ev_policy.losses_to_bad = 3;
  q.ev_policy.correlated_loss_window = Duration::Milliseconds(10);
  q.ev_policy.probe_interval = Duration::Milliseconds(5);
  q.ev_policy.probe_timeout = Duration::Milliseconds(20);
  q.cc.initial_window = Bytes{1 << 20};
  q.cc.max_window = Bytes{8 << 20};
  // MRC: at least 16 packets. On a shared CPU the delay signal is mostly scheduling, which pins
  // the window at its floor; 16 KiB was 2 packets on jumbo links, and clos4's steps got slower
  // all drill long (baseline 0.86 s, tail 1.4-1.9 s; with the floor 0.54 s and back within 2 s).
  // RC keeps 16 KiB: its go-back-N resends the whole window on every timeout.
  q.cc.min_window = Bytes{transport == TransportMode::kMrc ? std::max<uint64_t>(16 * 1024, 16ull * mtu) : 16 * 1024};
  q.cc.target_queuing_delay = Duration::Milliseconds(1);
  q.max_outstanding_packets = 8192;
  q.receive_window_packets = 8192;
  return q;
}

QpConfig FabricQpConfig(TransportMode transport, const std::vector<int>& ev_planes, uint32_t mtu) {
  return BaseConfig(transport, ev_planes, mtu);
}

}  // namespace mrclab::mrc
