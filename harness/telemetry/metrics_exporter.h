// DrillMetrics: the live metrics of a drill, served in the Prometheus text format by an HTTP
// endpoint of its own (prometheus-cpp's Exposer, at MetricsOptions::bind, path /metrics).
// Metrics, with their labels:
//   mrclab_step_seconds{transport}                       histogram, buckets 10 ms .. 60 s
//   mrclab_steps_completed_total{transport}              counter
//   mrclab_job_state{transport,state}                    gauge, 1 for the current state, 0 for
//                                                        the others (idle, running, completed,
//                                                        interrupted, failed)
//   mrclab_faults_active                                 gauge
//   mrclab_faults_applied_total{kind}                    counter
//   mrclab_evs{transport,plane,state}                    gauge, how many of the job's EVs (over
//                                                        all QPs) are in each state
//   mrclab_ev_state{transport,qp,ev,plane,state}         gauge, 1 for the current state, 0 for
//                                                        the others (good, assumed_bad, denied)
//   mrclab_ev_tx_packets_total{transport,qp,ev}          counter
//   mrclab_ev_retransmits_total{transport,qp,ev}         counter
//                                                        (the three per-EV families only for
//                                                        jobs of at most kMaxEvSeries EVs)
//   mrclab_retransmissions_total{transport}              counter
//   mrclab_link_rx_packets_total{link,end}, mrclab_link_tx_packets_total{link,end},
//   mrclab_link_rx_dropped_total{link,end}, mrclab_link_tx_dropped_total{link,end}
//                                                        counters; end = "node:interface"
// Counters are fed cumulative totals (what the transport or the kernel reports): the last total
// per label set is kept and the counter grows by the difference. A total below the last one (a
// restarted endpoint, a recreated interface) counts as growth from zero. Every setter is
// thread-safe. A state outside the listed ones is exported too, and joins the set for that
// label set from then on.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace mrclab::harness {

// A job with more EVs than this (QPs x EVs per QP) gets only the per-plane counts: one series per
// EV would make every scrape megabytes long and cost the drill the CPU its job needs.
inline constexpr size_t kMaxEvSeries = 8192;

struct MetricsOptions {
  std::string bind = "127.0.0.1:9464";  // HOST:PORT or [IPv6]:PORT; port 0 = pick a free one
  // When the port is taken (a second drill at once), listen on a free port of the same host
  // instead of failing; taken_port() then says which port was wanted.
  bool free_port_if_taken = false;
};

// Why `bind` cannot be listened on now ("Address already in use"), "" if it can. Throws
// std::runtime_error for a malformed address. For --check: nothing is left listening.
std::string MetricsBindProblem(const std::string& bind);
// Throws emulator::InputError "<field>: bad bind address '<bind>': <why>" unless `bind` is
// HOST:PORT or [IPv6]:PORT with a numeric address (port 0: any free one). Opens nothing.
void CheckMetricsBind(const std::string& bind, const std::string& field);

class DrillMetrics {
 public:
  // Starts the HTTP endpoint. Throws std::runtime_error naming the address and the reason when
  // it is malformed or cannot be listened on (e.g. "Address already in use").
  explicit DrillMetrics(const MetricsOptions& options);
  ~DrillMetrics();
  DrillMetrics(const DrillMetrics&) = delete;
  DrillMetrics& operator=(const DrillMetrics&) = delete;

  uint16_t port() const;    // the port actually listened on
  uint16_t taken_port() const;  // the port asked for, if it was taken (free_port_if_taken); else 0
  std::string url() const;  // "http://127.0.0.1:PORT/metrics" (a wildcard bind shows loopback)

  void ObserveStep(const std::string& transport, double seconds);
  void StepsCompleted(const std::string& transport, uint64_t total);
  void JobState(const std::string& transport, const std::string& state);
  void FaultsActive(int n);
  void FaultApplied(const std::string& kind);
  // {plane: {state: EVs}}; a known state missing from a plane's map is set to 0. States are
  // matched case-insensitively ("ASSUMED_BAD" is assumed_bad).
  void EvCounts(const std::string& transport, const std::map<int, std::map<std::string, int>>& per_plane);
  void EvState(const std::string& transport, const std::string& qp, int ev, int plane,
               const std::string& state);
  void EvPackets(const std::string& transport, const std::string& qp, int ev, uint64_t tx_total,
                 uint64_t retransmits_total);
  void Retransmissions(const std::string& transport, uint64_t total);
  void LinkCounters(const std::string& link, const std::string& end, uint64_t rx_packets,
                    uint64_t tx_packets, uint64_t rx_dropped, uint64_t tx_dropped);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mrclab::harness
