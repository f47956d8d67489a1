// Loop driver: an in-process, deterministic network between two Contexts, in virtual time.
// Each (direction, EV) is a path with a propagation delay, an optional rate (serialization
// queue, optional drop-tail limit and ECN-CE marking threshold), a loss rate drawn from the
// seeded generator, a loss predicate (mask) and "down" intervals (a killed link heals at the
// end of its interval). A host may also have an egress rate shared by all its EVs (its NIC).
// Nothing here reads a clock: RunUntil advances virtual time from event to event, so a run is
// reproducible from its seed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <span>
#include <vector>

#include "mrc/core/context.h"
#include "mrc/core/rng.h"
#include "mrc/core/units.h"

namespace mrclab::mrc {

struct DropContext {
  int from_host;
  uint16_t ev;
  uint64_t index_on_path;   // 0-based count of datagrams offered to this path
  uint64_t index_from_host; // 0-based count of datagrams the host sent
  std::span<const uint8_t> bytes;
};

struct PathSpec {
  Duration delay = Duration::Microseconds(5);
  BitsPerSecond rate{0};       // 0: no serialization delay
  Bytes queue_limit{0};        // 0: unlimited
  Bytes ecn_threshold{0};      // 0: never mark
  double loss_rate = 0;
  std::function<bool(const DropContext&)> drop;  // loss mask
  std::vector<std::pair<Timestamp, Timestamp>> down;  // [from, to)
};

struct PathCounters {
  uint64_t offered = 0, delivered = 0, dropped = 0, ecn_marked = 0;
};

class LoopNetwork {
 public:
  explicit LoopNetwork(uint64_t seed = 1) : rng_(seed) {}

  // Hosts are numbered in the order added; datagrams from host 0 go to host 1 and back.
  int AddHost(Context* context);
  void SetDefaultPath(const PathSpec& spec) { default_path_ = spec; }
  PathSpec& Path(int from_host, uint16_t ev);  // created from the default on first use
  void SetHostEgressRate(int host, BitsPerSecond rate) { hosts_.at(host).egress_rate = rate; }
  // Takes EV `ev` down in both directions during [from, to).
  void KillEv(uint16_t ev, Timestamp from, Timestamp to = Timestamp::Infinite());
  // Called for every datagram a host sends (before loss), e.g. to write a pcap.
  void SetTap(std::function<void(int from_host, uint16_t ev, Timestamp, std::span<const uint8_t>)> tap) {
    tap_ = std::move(tap);
  }

  Timestamp now() const { return now_; }
  // Runs events until `done()` holds (checked after every event) or virtual time would pass
  // `deadline`. Returns whether `done()` held.
  bool RunUntil(const std::function<bool()>& done, Timestamp deadline);
  void RunFor(Duration d) { RunUntil([] { return false; }, now_ + d); }

  const PathCounters& Counters(int from_host, uint16_t ev) { return counters_[{from_host, ev}]; }

 private:
  struct Host {
    Context* context;
    BitsPerSecond egress_rate{0};
    Timestamp egress_busy_until;
    uint64_t sent = 0;
  };
  struct PathState {
    PathSpec spec;
    Timestamp busy_until;
    uint64_t offered = 0;
  };
  struct InFlight {
    Timestamp arrival;
    uint64_t seq;
    int to_host;
    int from_host;
    uint16_t ev;
    bool ecn_ce;
    std::vector<uint8_t> bytes;
    bool operator>(const InFlight& o) const {
      return arrival != o.arrival ? arrival > o.arrival : seq > o.seq;
    }
  };

  static bool IsDown(const PathSpec& spec, Timestamp t);
  void Flush();
  void Send(int from, const Transmit& t, std::span<const uint8_t> bytes);

  Rng rng_;
  Timestamp now_;
  std::vector<Host> hosts_;
  PathSpec default_path_;
  std::map<std::pair<int, uint16_t>, PathState> paths_;
  std::map<std::pair<int, uint16_t>, PathCounters> counters_;
  std::priority_queue<InFlight, std::vector<InFlight>, std::greater<>> queue_;
  uint64_t seq_ = 0;
  std::function<void(int, uint16_t, Timestamp, std::span<const uint8_t>)> tap_;
  std::vector<uint8_t> buffer_ = std::vector<uint8_t>(65536);
};

}  // namespace mrclab::mrc
