// QueuedPacket: a packet in a port's queue and then on its link, until its arrival at the far
// end. The ports that share an ArrivalQueue take their nodes from its QueuedPacketPool, most
// recently freed first: the node a Deliver gives back is the one the next hop's Admit takes,
// still in cache. (Each port kept its own ring of entries before: at 1,024 hosts and more a
// port is cold when a packet comes, and writing its entry was two cache misses per hop.)
//
//   SimPort::Admit ─Take─► node: packet, finish, seq; linked into the port's FIFO ─► arrival
//   (at, port, seq, node) ─► SimPort::Deliver ─Give─► free list ─► next hop's Admit
//
// Contract:
//   - A node's `seq` names the one arrival that may deliver (or, once `dropped`, free) it; seq
//     values are unique within a pool and never 0, so an arrival whose node was re-timed (a rate
//     change) or freed and taken again finds another seq and does nothing.
//   - Nodes live as long as the pool; Take never invalidates other nodes. Not thread-safe: one
//     simulation, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "emulator/ns3/model/sim_packet.h"

namespace mrclab::emulator::sim {

struct QueuedPacket {
  SimPacket packet;
  int64_t finish = 0;            // ns-3 time step at which its last bit is serialised
  uint64_t seq = 0;              // its arrival's; 0 while free
  QueuedPacket* next = nullptr;  // the next packet in its port's FIFO
  bool dropped = false;          // its port went down: the arrival frees it, delivers nothing
};

class QueuedPacketPool {
 public:
  QueuedPacket* Take() {
    if (free_.empty()) Grow();
    QueuedPacket* node = free_.back();
    free_.pop_back();
    return node;
  }
  // Back to the pool (what it holds is released: its payload; the rest is overwritten by the
  // next Take's owner).
  void Give(QueuedPacket* node) {
    node->packet.payload.reset();
    node->seq = 0;
    node->next = nullptr;
    node->dropped = false;
    free_.push_back(node);
  }
  uint64_t NextSeq() { return ++last_seq_; }
  // Nodes allocated (free or in use).
  size_t Allocated() const { return chunks_.size() * kChunk; }
  // Nodes in the pool, waiting to be taken.
  size_t Free() const { return free_.size(); }

 private:
  static constexpr size_t kChunk = 256;
  void Grow() {
    chunks_.push_back(std::make_unique<QueuedPacket[]>(kChunk));
    QueuedPacket* chunk = chunks_.back().get();
    for (size_t i = kChunk; i-- > 0;) free_.push_back(&chunk[i]);
  }

  std::vector<std::unique_ptr<QueuedPacket[]>> chunks_;
  std::vector<QueuedPacket*> free_;
  uint64_t last_seq_ = 0;
};

}  // namespace mrclab::emulator::sim
