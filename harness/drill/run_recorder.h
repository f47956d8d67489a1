// The run directory of a drill: runs/<UTC timestamp>-<scenario>/ (or under --out DIR):
//   scenario.yaml   the scenario as given
//   events.jsonl    one JSON object per line, in the order seen: drill phases, faults applied
//                   and reverted, EV and QP state changes, step completions, BGP/BFD changes
//   steps.csv       one row per training step of every transport
//   evs.csv         per-EV state and cumulative counters of every QP, sampled every second
//   links.csv       cumulative packet and drop counters of the link ends that carried or dropped
//                   a packet, sampled every second; an end is listed from the sample before its
//                   first packet, so an end not listed counted nothing (times: unix seconds, or
//                   simulated seconds in an ns-3 run; result.json says)
//   lab.json        the lab's resolved plan (nodes, links, addresses), for diagrams; for a lab of
//                   more than kMaxListedLabItems nodes and links, its summary (not_listed says)
//   fidelity.csv    real-time labs: per second, how busy the machine was and whether the drill's
//                   threads waited for it (fidelity.h)
//   result.json     scenario hash, seed, lab digest, versions, per-SLO results, emulation
//                   fidelity, verdict
//   junit.xml       one test case per SLO and one for emulation fidelity (CI systems show
//                   drills as tests)
//   frr-logs/       the lab's FRR logs at the end of the drill
// Event() and Step() are thread-safe and flush each line, so a crashed drill leaves what it saw.
#pragma once

#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/resolved_lab.h"
#include "emulator/wall_clock.h"
#include "harness/drill/fidelity.h"
#include "harness/drill/link_sample.h"
#include "harness/drill/verdict.h"

namespace mrclab::harness {

// Refuses (emulator::InputError naming --out) a root where no run directory could be made: the
// nearest existing folder on its path is a file, or is not writable. Drills check before they
// deploy anything.
void CheckRunRoot(const std::string& out_root);

class RunRecorder {
 public:
  // Creates the directory (a new one; never reuses an existing run's directory). `clock` gives
  // the time events are stamped with: the backend's (unix or simulated seconds).
  RunRecorder(const std::string& out_root, const std::string& scenario_name, const std::string& scenario_text,
              std::function<double()> clock);
  ~RunRecorder();
  RunRecorder(const RunRecorder&) = delete;
  RunRecorder& operator=(const RunRecorder&) = delete;

  const std::string& dir() const { return dir_; }
  void Event(nlohmann::json event);  // adds "t" (the clock's seconds) when missing
  void Step(const std::string& transport, const RecordedStep& step);
  // One evs.csv row; FlushEvs() after a sample's last.
  void EvSample(const std::string& transport, double t, const EvSnapshot& e);
  void FlushEvs();
  void LinkSamples(double t, const std::vector<LinkSample>& links);
  // lab.json: the plan (ResolvedLab::ToJson), or, above `max_listed` nodes and links, its
  // summary with "not_listed" (131,072 hosts: 2 M links, a 1.3 GB document that no report
  // could load). Returns the lab digest, the SHA-256 of the whole plan's compact JSON, computed
  // without holding the plan as one document.
  std::string WriteLab(const emulator::ResolvedLab& lab, size_t max_listed = kMaxListedLabItems);
  static constexpr size_t kMaxListedLabItems = 1 << 18;  // 16,384 hosts on 8 planes are listed
  void WriteResult(const nlohmann::json& result);
  // One testcase per SLO, one for emulation fidelity and one for the fault schedule (an error
  // when a planned fault was not applied: NotTested).
  void WriteJunit(const std::string& scenario, const std::vector<SloResult>& slos, const FidelityReport& fidelity,
                  const std::vector<std::string>& not_tested, double seconds);
  void WriteFidelity(const std::vector<FidelitySample>& samples);  // fidelity.csv
  // Copies <lab state dir>/nodes/*/*.log into frr-logs/NODE/.
  void CopyFrrLogs(const std::string& lab_state_dir);

 private:
  std::string dir_;
  std::function<double()> clock_;
  std::mutex mu_;
  FILE* events_ = nullptr;
  FILE* steps_ = nullptr;
  FILE* evs_ = nullptr;
  FILE* links_ = nullptr;
  bool steps_header_ = false;
  // links.csv: the ends listed so far, and the time of the last sample (their zero rows').
  std::unordered_set<std::string> listed_ends_;
  std::optional<double> last_link_sample_;
};

using emulator::UnixNow;
std::string Sha256Hex(const std::string& data);  // for the scenario hash and lab digest

}  // namespace mrclab::harness
