// SimPort: one end of a link, transmitting in one direction (a link is two ports, a->b and
// b->a). An output queue in front of a serialiser, a propagation delay behind it, and the far
// end's ingress faults at the other side:
//
//   Enqueue ─► [down? fault drop] ─► [full? tail drop] ─► [ECN mark] ─► FIFO: its serialisation
//      is timed at once (it starts when the packet before it ends) ─► Deliver (one arrival in
//      the ArrivalQueue, at the end of serialisation + delay) ─► [blackhole? / loss? fault drop] ─► far end's
//      PacketSink::Receive
//
// Contract:
//   - Queue occupancy counts every accepted packet until its last bit is serialised (the one
//     being transmitted included). A packet is accepted iff occupancy + its WireBytes() fits
//     the buffer; otherwise it is dropped (queue_drops). An ECN-capable packet that finds the
//     occupancy above the ECN threshold (before it joins) gets CE (ecn_marks).
//   - One packet is serialised at a time, taking WireBytes()*8/rate. The remainder of the
//     division is carried to the next packet, so a saturated port sends at exactly its rate
//     even though ns-3 time has a resolution (1 ns by default). A rate change applies from the
//     next packet that starts serialising (waiting packets are re-timed).
//   - A packet reaches the far end `delay` after its serialisation ends. Deliveries happen in
//     transmission order. One arrival per packet in the ArrivalQueue (Deliver, carrying the
//     packet's node, from the queue's pool and linked into the port's FIFO until it arrives,
//     and its sequence number): departures are computed, not simulated, as htsim does, and tx
//     counters and occupancy catch up with the clock when they are read.
//   - Down: going down drops the queue, the packet being serialised and every packet still on
//     the wire (fault_drops, counted when it goes down); while down, everything offered is
//     dropped (fault_drops). Coming up starts from an empty queue.
//   - Blackhole and loss model the FAR END's ingress: they are applied when a packet arrives
//     (fault_drops), after its transmission was counted. Loss is a Bernoulli draw per arriving
//     packet from ns-3 RNG stream `loss_stream` (created when a loss rate is first set), so a
//     run is reproducible from the ns-3 seed and run number.
//   - rx_packets/rx_bytes count what the far end received (after blackhole and loss).
//   - The tx-space callback runs once each time the occupancy, having reached half the buffer
//     or more, falls below half again (at the end of the serialisation that brings it there).
//   - The port must outlive the simulator's events and the arrivals that refer to it: keep it
//     (and its ArrivalQueue) alive until ns3::Simulator::Run() has returned.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>

#include "emulator/ns3/model/queued_packet.h"
#include "emulator/ns3/model/sim_packet.h"
#include "mrc/core/prefetch.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/random-variable-stream.h"

namespace mrclab::emulator::sim {

// What a port delivers into: a switch's forwarding engine or a host port.
class PacketSink {
 public:
  virtual ~PacketSink() = default;
  // Takes a packet that arrived over a link (after that link's ingress faults).
  virtual void Receive(SimPacket&& packet) = 0;
  // A hint that `packet` arrives soon, so that Receive finds in cache what it reads for it:
  // stage 0 prefetches the lines the packet and the sink point at; each later stage, called
  // later (when the stage before's lines are there), the lines those point at. The last stage
  // is called for the arrival that runs next. Changes nothing: it may be called for a packet
  // that never arrives.
  static constexpr int kPrefetchStages = 4;
  virtual void Prefetch(const SimPacket& /*packet*/, int /*stage*/) const {}
};

struct PortCounters {
  uint64_t tx_packets = 0, tx_bytes = 0;  // serialised (wire bytes)
  uint64_t rx_packets = 0, rx_bytes = 0;  // received by the far end, after blackhole and loss
  uint64_t queue_drops = 0;               // tail drops: the buffer was full
  uint64_t fault_drops = 0;               // down, blackhole, loss
  uint64_t ecn_marks = 0;                 // packets this port set CE on
  uint64_t max_queue_bytes = 0;           // highest occupancy seen
};

inline constexpr uint64_t kNeverMark = std::numeric_limits<uint64_t>::max();

class ArrivalQueue;

struct PortConfig {
  uint64_t rate_bps = 100'000'000'000;
  ns3::Time delay = ns3::MicroSeconds(1);
  uint64_t buffer_bytes = 1 << 20;
  uint64_t ecn_threshold_bytes = kNeverMark;  // kNeverMark: the port never marks
  int64_t loss_stream = 0;                    // ns-3 RNG stream of the loss draws
  // Where the port's deliveries are scheduled (arrival_queue.h; shared by a fabric's ports,
  // and it must outlive the port's pending deliveries); null: a queue of the port's own.
  ArrivalQueue* arrivals = nullptr;
};

enum class EnqueueResult { kQueued, kQueueDrop, kFaultDrop };

class alignas(64) SimPort {
 public:
  // `far_end` receives what this port delivers; it must outlive the port's events.
  // Throws std::invalid_argument if the rate is zero.
  SimPort(const PortConfig& config, PacketSink* far_end);
  ~SimPort();
  SimPort(const SimPort&) = delete;
  SimPort& operator=(const SimPort&) = delete;

  // Offers a packet for transmission (see the contract for drops and marking).
  EnqueueResult Enqueue(SimPacket&& packet);

  // Brings the port down (dropping what it holds) or up. Idempotent.
  void SetUp(bool up);
  // Prefetches the port's state that Enqueue and Deliver read (a hint; changes nothing).
  void Prefetch() const { mrc::PrefetchBytes(this, 2 * mrc::kCacheLineBytes); }
  // Whether the port is up (a switch only forwards on up ports).
  bool IsUp() const { return up_; }
  // Drops (or stops dropping) every packet at the far end's ingress.
  void SetBlackhole(bool on) { blackhole_ = on; }
  // Drops each packet arriving at the far end with probability `rate` (0 clears). Throws
  // std::invalid_argument unless 0 <= rate <= 1.
  void SetLossRate(double rate);
  // Sets the serialisation rate in bits per second for packets that start after this call.
  // Throws std::invalid_argument if bps is zero.
  void SetRate(uint64_t bps);
  // The current serialisation rate in bits per second.
  uint64_t Rate() const { return rate_bps_; }
  // Bytes accepted and not yet fully serialised.
  uint64_t QueuedBytes() const;
  // The buffer size in bytes.
  uint64_t BufferBytes() const { return buffer_bytes_; }
  // Called when the occupancy falls below half the buffer after reaching half or more (see
  // the contract), so a sender that stopped at a full queue can refill it. The callback may
  // call Enqueue.
  void SetOnTxSpace(std::function<void()> callback);
  // Counters since construction, up to now.
  const PortCounters& Counters() const;

 private:
  // Times the packet's serialisation after the last one, appends it and schedules its delivery.
  void Admit(SimPacket&& packet, int64_t now);
  // The same for a node that holds its packet already.
  void Link(QueuedPacket* node, int64_t now);
  // Moves packets whose serialisation ended by `now` from the queue to the wire.
  void Retire(int64_t now) const;
  // Run by the ArrivalQueue.
  friend class ArrivalQueue;
  void Deliver(QueuedPacket* node, uint64_t seq);
  void ArmTxSpace(int64_t now);
  void TxSpaceDue();
  int64_t SerialisationSteps(uint32_t wire_bytes);

  // Laid out by use, so that a packet's hop touches two cache lines: the first is what
  // Enqueue, Admit, Retire and Deliver read and write (and what a switch's IsUp() reads just
  // before Enqueue), the second their configuration and the counters every packet moves; what
  // a hop does not read (the other counters, the loss rate of a port without loss, the
  // callback) comes after. Departures are computed at Enqueue; reading the state catches up
  // with the clock (Retire), hence mutable. The rx counters are not counted per packet: they
  // are what was serialised less what is on the wire and what never arrived (Counters()).
  bool up_ = true;
  bool blackhole_ = false;
  bool lossy_ = false;                 // loss_rate_ > 0 (Deliver reads the rate only then)
  bool tx_space_armed_ = false;        // a TxSpaceDue event is pending
  mutable uint32_t unfinished_packets_ = 0;  // from unfinished_ on (Retire needs no node when all finished)
  // The FIFO, oldest first (linked by QueuedPacket::next): the packets on the wire (serialised,
  // not arrived), then from unfinished_ on the one serialising and those waiting.
  QueuedPacket* head_ = nullptr;
  QueuedPacket* tail_ = nullptr;
  mutable QueuedPacket* unfinished_ = nullptr;
  mutable uint64_t queued_bytes_ = 0;  // wire bytes of the packets not finished
  int64_t last_finish_ = 0;            // when the serialiser is free again
  PacketSink* far_end_;
  ArrivalQueue* arrivals_;             // and its pool of queued-packet nodes

  alignas(64) uint64_t rate_bps_;
  uint64_t serialisation_carry_ = 0;  // remainder of the last division, in 1/rate ticks
  int64_t delay_steps_;
  uint64_t buffer_bytes_;
  uint64_t ecn_threshold_bytes_;
  mutable uint64_t tx_packets_ = 0, tx_bytes_ = 0;  // serialised (Retire)
  uint64_t max_queue_bytes_ = 0;

  mutable PortCounters counters_;  // drops and ECN marks as they happen; the rest by Counters()
  // Serialised but never received: lost or blackholed at the far end's ingress, or on the wire
  // when the port went down.
  uint64_t unreceived_packets_ = 0, unreceived_bytes_ = 0;

  double loss_rate_ = 0;
  std::function<void()> on_tx_space_;
  int64_t loss_stream_;
  ns3::Ptr<ns3::UniformRandomVariable> loss_draws_;  // created by the first SetLossRate(> 0)
  std::unique_ptr<ArrivalQueue> own_arrivals_;       // when the config gave none
};

}  // namespace mrclab::emulator::sim
