// The fault journal of a lab, /run/mrclab/<lab>/faults.jsonl: one JSON object per line,
//   {"op":"apply","id":3,"action":{...},"t":1700000000.12}   written BEFORE the fault is made
//   {"op":"revert","id":3,"t":...}                           written after it was undone
// A fault is active from its apply line until its revert line. Every process that injects
// faults into the lab shares the journal; an exclusive flock on it, held by FaultJournal for
// its life, serialises their apply and revert operations and makes ids unique (max + 1).
// Reading needs no lock: each line is one write() with O_APPEND, and a torn line is skipped.
#pragma once

#include <string>
#include <vector>

#include "emulator/netns/faults.h"

namespace mrclab::emulator::netns {

struct FaultRecord {
  int id = 0;
  FaultAction action;
  double applied_at = 0;
  bool reverted = false;
};

class FaultJournal {
 public:
  // Opens (creates) the journal of a deployed lab and waits for the exclusive lock.
  explicit FaultJournal(const std::string& lab_name);
  ~FaultJournal();
  FaultJournal(const FaultJournal&) = delete;
  FaultJournal& operator=(const FaultJournal&) = delete;

  // Appends an apply line with a new id (one more than any id in the journal); returns it.
  int RecordApply(const FaultAction& action, double now);
  void RecordRevert(int id, double now);

  // Every fault of a lab's journal, by id (empty when there is no journal yet).
  static std::vector<FaultRecord> Read(const std::string& lab_name);
  static std::string PathOf(const std::string& lab_name);

 private:
  void Append(const nlohmann::json& line);
  std::string lab_;
  int fd_ = -1;
};


}  // namespace mrclab::emulator::netns
