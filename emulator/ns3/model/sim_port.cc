#include "emulator/ns3/model/sim_port.h"

#include <algorithm>
#include <stdexcept>

#include "ns3/simulator.h"

namespace mrclab::emulator::sim {

SimPort::SimPort(const PortConfig& config, PacketSink* far_end)
    : far_end_(far_end),
      rate_bps_(config.rate_bps),
      delay_(config.delay),
      buffer_bytes_(config.buffer_bytes),
      ecn_threshold_bytes_(config.ecn_threshold_bytes),
      loss_stream_(config.loss_stream),
      ticks_per_second_(static_cast<uint64_t>(ns3::Seconds(1).GetTimeStep())) {
  if (rate_bps_ == 0) throw std::invalid_argument("a port needs a positive rate");
}

EnqueueResult SimPort::Enqueue(SimPacket&& packet) {
  if (!up_) {
    ++counters_.fault_drops;
    return EnqueueResult::kFaultDrop;
  }
  const uint32_t wire = packet.WireBytes();
  if (queued_bytes_ + wire > buffer_bytes_) {
    ++counters_.queue_drops;
    return EnqueueResult::kQueueDrop;
  }
  if (packet.ecn_capable && queued_bytes_ > ecn_threshold_bytes_) {
    packet.ecn_ce = true;
    ++counters_.ecn_marks;
  }
  queued_bytes_ += wire;
  counters_.max_queue_bytes = std::max(counters_.max_queue_bytes, queued_bytes_);
  queue_.Push(std::move(packet));
  if (!busy_) StartTransmission();
  return EnqueueResult::kQueued;
}

void SimPort::SetUp(bool up) {
  if (up == up_) return;
  up_ = up;
  if (up) return;
  ++down_epoch_;
  if (busy_) {
    ns3::Simulator::Cancel(transmit_done_);
    busy_ = false;
  }
  counters_.fault_drops += queue_.Size();
  queue_.Clear();
  queued_bytes_ = 0;
}

void SimPort::SetLossRate(double rate) {
  if (!(rate >= 0 && rate <= 1)) throw std::invalid_argument("a loss rate is within [0, 1]");
  loss_rate_ = rate;
  if (rate > 0 && !loss_draws_) {
    loss_draws_ = ns3::CreateObject<ns3::UniformRandomVariable>();
    loss_draws_->SetStream(loss_stream_);
  }
}

void SimPort::SetRate(uint64_t bps) {
  if (bps == 0) throw std::invalid_argument("a port needs a positive rate");
  rate_bps_ = bps;
  serialisation_carry_ = 0;  // a remainder in units of the old rate means nothing now
}

ns3::Time SimPort::SerialisationTime(uint32_t wire_bytes) {
  const unsigned __int128 scaled =
      static_cast<unsigned __int128>(wire_bytes) * 8 * ticks_per_second_ + serialisation_carry_;
  serialisation_carry_ = static_cast<uint64_t>(scaled % rate_bps_);
  return ns3::TimeStep(static_cast<uint64_t>(scaled / rate_bps_));
}

void SimPort::StartTransmission() {
  busy_ = true;
  transmit_done_ = ns3::Simulator::Schedule(SerialisationTime(queue_.Front().WireBytes()),
                                            &SimPort::TransmitDone, this);
}

void SimPort::TransmitDone() {
  busy_ = false;
  SimPacket packet = queue_.Pop();
  const uint32_t wire = packet.WireBytes();
  queued_bytes_ -= wire;
  ++counters_.tx_packets;
  counters_.tx_bytes += wire;
  on_wire_.Push({std::move(packet), down_epoch_});
  ns3::Simulator::Schedule(delay_, &SimPort::Deliver, this);
  if (!queue_.Empty()) StartTransmission();
  if (on_tx_space_ && 2 * queued_bytes_ < buffer_bytes_) on_tx_space_();
}

void SimPort::Deliver() {
  InFlight arrived = on_wire_.Pop();
  const bool lost = arrived.epoch != down_epoch_ || blackhole_ ||
                    (loss_rate_ > 0 && loss_draws_->GetValue() < loss_rate_);
  if (lost) {
    ++counters_.fault_drops;
    return;
  }
  ++counters_.rx_packets;
  counters_.rx_bytes += arrived.packet.WireBytes();
  far_end_->Receive(std::move(arrived.packet));
}

}  // namespace mrclab::emulator::sim
