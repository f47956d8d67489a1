#include "emulator/ns3/model/sim_port.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

#include "emulator/ns3/model/arrival_queue.h"
#include "emulator/ns3/model/bucket_scheduler.h"
#include "ns3/simulator.h"

namespace mrclab::emulator::sim {

SimPort::SimPort(const PortConfig& config, PacketSink* far_end)
    : far_end_(far_end),
      arrivals_(config.arrivals),
      rate_bps_(config.rate_bps),
      delay_steps_(config.delay.GetTimeStep()),
      buffer_bytes_(config.buffer_bytes),
      ecn_threshold_bytes_(config.ecn_threshold_bytes),
      loss_stream_(config.loss_stream) {
  if (rate_bps_ == 0) throw std::invalid_argument("a port needs a positive rate");
  if (!arrivals_) {
    own_arrivals_ = std::make_unique<ArrivalQueue>();
    arrivals_ = own_arrivals_.get();
  }
}

SimPort::~SimPort() = default;

void SimPort::Retire(int64_t now) const {
  if (unfinished_ == nullptr) return;
  if (last_finish_ <= now) {  // the last one has finished, so have all: no node is read
    tx_packets_ += unfinished_packets_;
    tx_bytes_ += queued_bytes_;
    queued_bytes_ = 0;
    unfinished_packets_ = 0;
    unfinished_ = nullptr;
    return;
  }
  while (unfinished_->finish <= now) {  // (the last one has not finished: it stops there)
    const uint32_t wire = unfinished_->packet.WireBytes();
    queued_bytes_ -= wire;
    --unfinished_packets_;
    ++tx_packets_;
    tx_bytes_ += wire;
    unfinished_ = unfinished_->next;
  }
}

uint64_t SimPort::QueuedBytes() const {
  Retire(SimNowSteps());
  return queued_bytes_;
}

const PortCounters& SimPort::Counters() const {
  Retire(SimNowSteps());
  uint64_t wire_packets = 0, wire_bytes = 0;  // serialised, not arrived
  for (const QueuedPacket* node = head_; node != unfinished_; node = node->next) {
    ++wire_packets;
    wire_bytes += node->packet.WireBytes();
  }
  counters_.tx_packets = tx_packets_;
  counters_.tx_bytes = tx_bytes_;
  counters_.rx_packets = tx_packets_ - wire_packets - unreceived_packets_;
  counters_.rx_bytes = tx_bytes_ - wire_bytes - unreceived_bytes_;
  counters_.max_queue_bytes = max_queue_bytes_;
  return counters_;
}

EnqueueResult SimPort::Enqueue(SimPacket&& packet) {
  if (!up_) {
    ++counters_.fault_drops;
    return EnqueueResult::kFaultDrop;
  }
  const int64_t now = SimNowSteps();
  Retire(now);
  const uint32_t wire = packet.WireBytes();
  if (queued_bytes_ + wire > buffer_bytes_) {
    ++counters_.queue_drops;
    return EnqueueResult::kQueueDrop;
  }
  if (packet.ecn_capable && queued_bytes_ > ecn_threshold_bytes_) {
    packet.ecn_ce = true;
    ++counters_.ecn_marks;
  }
  Admit(std::move(packet), now);
  max_queue_bytes_ = std::max(max_queue_bytes_, queued_bytes_);
  if (2 * queued_bytes_ >= buffer_bytes_ && on_tx_space_) ArmTxSpace(now);
  return EnqueueResult::kQueued;
}

void SimPort::Admit(SimPacket&& packet, int64_t now) {
  QueuedPacket* node = arrivals_->Packets().Take();
  node->packet = std::move(packet);
  Link(node, now);
}

void SimPort::Link(QueuedPacket* node, int64_t now) {
  const uint32_t wire = node->packet.WireBytes();
  node->finish = std::max(now, last_finish_) + SerialisationSteps(wire);
  node->seq = arrivals_->Packets().NextSeq();
  node->next = nullptr;
  last_finish_ = node->finish;
  queued_bytes_ += wire;
  ++unfinished_packets_;
  if (tail_ != nullptr) {
    tail_->next = node;
  } else {
    head_ = node;
  }
  tail_ = node;
  if (unfinished_ == nullptr) unfinished_ = node;
  arrivals_->Push(node->finish + delay_steps_, this, node->seq, node);
}

void SimPort::SetUp(bool up) {
  if (up == up_) return;
  up_ = up;
  if (up) return;
  const int64_t now = SimNowSteps();
  Retire(now);
  // The queue, the packet serialising and those on the wire: each node stays with its
  // arrival, which frees it and delivers nothing.
  bool on_wire = true;  // head_ up to unfinished_: serialised (counted tx), not arrived
  for (QueuedPacket* node = head_; node != nullptr; node = node->next) {
    if (node == unfinished_) on_wire = false;
    if (on_wire) {
      ++unreceived_packets_;
      unreceived_bytes_ += node->packet.WireBytes();
    }
    ++counters_.fault_drops;
    node->dropped = true;
    node->packet = SimPacket{};
  }
  head_ = tail_ = unfinished_ = nullptr;
  queued_bytes_ = 0;
  unfinished_packets_ = 0;
  last_finish_ = now;
}

void SimPort::SetLossRate(double rate) {
  if (!(rate >= 0 && rate <= 1)) throw std::invalid_argument("a loss rate is within [0, 1]");
  loss_rate_ = rate;
  lossy_ = rate > 0;
  if (rate > 0 && !loss_draws_) {
    loss_draws_ = ns3::CreateObject<ns3::UniformRandomVariable>();
    loss_draws_->SetStream(loss_stream_);
  }
}

void SimPort::SetRate(uint64_t bps) {
  if (bps == 0) throw std::invalid_argument("a port needs a positive rate");
  const int64_t now = SimNowSteps();
  Retire(now);
  // The first unfinished packet started when the one before it finished (by now), so it is
  // serialising and keeps its timing; the packets behind it are unlinked and re-timed (with
  // new seqs: the arrivals they had do nothing).
  QueuedPacket* waiting = nullptr;
  if (unfinished_ != nullptr) {
    waiting = unfinished_->next;
    unfinished_->next = nullptr;
    tail_ = unfinished_;
    for (const QueuedPacket* node = waiting; node != nullptr; node = node->next) {
      queued_bytes_ -= node->packet.WireBytes();
      --unfinished_packets_;
    }
  }
  last_finish_ = unfinished_ != nullptr ? unfinished_->finish : now;
  rate_bps_ = bps;
  serialisation_carry_ = 0;  // a remainder in units of the old rate means nothing now
  while (waiting != nullptr) {
    QueuedPacket* node = waiting;
    waiting = node->next;
    Link(node, now);
  }
}

namespace {
// ns-3's time steps per second: its resolution, fixed before the first Time is made.
uint64_t TicksPerSecond() {
  static const uint64_t ticks = static_cast<uint64_t>(ns3::Seconds(1).GetTimeStep());
  return ticks;
}
}  // namespace

int64_t SimPort::SerialisationSteps(uint32_t wire_bytes) {
  const uint64_t ticks_per_second = TicksPerSecond();
  // In 64 bits while they hold the product (any frame at ns-3's default nanosecond steps): a
  // 128-bit division is a call into libgcc, about 1% of a big simulation.
  uint64_t scaled64;
  if (!__builtin_mul_overflow(uint64_t{wire_bytes} * 8, ticks_per_second, &scaled64) &&
      !__builtin_add_overflow(scaled64, serialisation_carry_, &scaled64)) {
    serialisation_carry_ = scaled64 % rate_bps_;
    return static_cast<int64_t>(scaled64 / rate_bps_);
  }
  const unsigned __int128 scaled =
      static_cast<unsigned __int128>(wire_bytes) * 8 * ticks_per_second + serialisation_carry_;
  serialisation_carry_ = static_cast<uint64_t>(scaled % rate_bps_);
  return static_cast<int64_t>(scaled / rate_bps_);
}

void SimPort::Deliver(QueuedPacket* node, uint64_t seq) {
  if (node->seq != seq) return;  // re-timed by a rate change: a later arrival delivers it
  if (node->dropped) {           // the port went down while it was queued or on the wire
    arrivals_->Packets().Give(node);
    return;
  }
  Retire(SimNowSteps());
  assert(node == head_ && node != unfinished_);
  head_ = node->next;
  if (head_ == nullptr) tail_ = nullptr;
  SimPacket arrived = std::move(node->packet);
  arrivals_->Packets().Give(node);  // before Receive: the next hop's Admit takes it, still in cache
  const bool lost = blackhole_ || (lossy_ && loss_draws_->GetValue() < loss_rate_);
  if (lost) {
    ++counters_.fault_drops;
    ++unreceived_packets_;
    unreceived_bytes_ += arrived.WireBytes();
    return;
  }
  far_end_->Receive(std::move(arrived));
}

void SimPort::SetOnTxSpace(std::function<void()> callback) {
  on_tx_space_ = std::move(callback);
  if (!on_tx_space_) return;  // (clearing needs no clock: it may run after the simulation)
  const int64_t now = SimNowSteps();
  Retire(now);
  if (2 * queued_bytes_ >= buffer_bytes_) ArmTxSpace(now);
}

void SimPort::ArmTxSpace(int64_t now) {
  if (tx_space_armed_) return;
  // The end of the serialisation after which less than half the buffer is left.
  uint64_t left = queued_bytes_;
  for (const QueuedPacket* node = unfinished_; node != nullptr; node = node->next) {
    left -= node->packet.WireBytes();
    if (2 * left < buffer_bytes_) {
      tx_space_armed_ = true;
      ns3::Simulator::Schedule(SimDelayUntil(node->finish), &SimPort::TxSpaceDue, this);
      return;
    }
  }
}

void SimPort::TxSpaceDue() {
  tx_space_armed_ = false;
  const int64_t now = SimNowSteps();
  Retire(now);
  if (2 * queued_bytes_ >= buffer_bytes_) {
    ArmTxSpace(now);  // more was queued since it was armed
  } else if (on_tx_space_) {
    on_tx_space_();
  }
}

}  // namespace mrclab::emulator::sim
