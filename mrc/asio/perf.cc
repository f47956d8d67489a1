#include "mrc/asio/perf.h"
#include "mrc/core/qp_presets.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

namespace mrclab::mrc {
namespace {

constexpr uint32_t kPatternPeriod = 251;  // prime: consecutive messages differ in every byte

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + i, v.end());
  return v[i];
}

}  // namespace

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

QpConfig DefaultRealtimeQpConfig(TransportMode transport, const std::vector<PerfEv>& evs, uint32_t mtu) {
  std::vector<int> planes;
  for (const auto& e : evs) planes.push_back(e.plane);
  return RealtimeQpConfig(transport, planes, mtu);
}

PerfResult RunPerf(const PerfConfig& c) {
  PerfResult r;
  r.transport = std::string(ToString(c.transport));
  r.ev_mode = c.ev_mode == EvMode::kUdp ? "udp" : "srv6";
  try {
    if (c.evs.empty()) throw std::runtime_error("no EVs");
    if (c.server_ports.empty() || c.client_ports.empty()) throw std::runtime_error("no ports");
    if (c.mtu == 0 || c.mtu > 8192) throw std::runtime_error("mtu must be 1..8192");
    if (c.message_bytes == 0 || c.message_bytes > (1u << 30)) throw std::runtime_error("bad message size");
    std::vector<PerfEv> reverse = c.reverse_evs;
    if (reverse.empty()) {
      if (c.ev_mode == EvMode::kSrv6) throw std::runtime_error("srv6 mode needs reverse_evs");
      for (const PerfEv& ev : c.evs) {
        auto port = std::find_if(c.client_ports.begin(), c.client_ports.end(),
                                 [&](const PerfPort& p) { return p.plane == ev.plane; });
        if (port == c.client_ports.end()) throw std::runtime_error("no client port on plane " + std::to_string(ev.plane));
        reverse.push_back({ev.plane, port->local_address, ev.udp_source_port});
      }
    }
    if (reverse.size() != c.evs.size()) throw std::runtime_error("reverse_evs size differs from evs");

    const uint32_t slots = std::max<uint32_t>(1, c.max_outstanding_messages);
    const uint64_t msg = c.message_bytes;
    QpConfig qpc = c.qp ? *c.qp : DefaultRealtimeQpConfig(c.transport, c.evs, c.mtu);
    qpc.mode = c.transport;
    qpc.max_send_wr = std::max(qpc.max_send_wr, slots);

    boost::asio::io_context server_io, client_io;
    auto to_ports = [](const std::vector<PerfPort>& ps) {
      std::vector<EndpointPort> out;
      for (const auto& p : ps) out.push_back({p.netns, p.local_address, p.plane});
      return out;
    };
    AsioEndpointConfig sconf;
    sconf.ports = to_ports(c.server_ports);
    sconf.ev_mode = c.ev_mode;
    sconf.udp_port = c.udp_port;
    sconf.segmentation_offload = c.segmentation_offload;
    if (c.key_seed) sconf.key_seed = *c.key_seed * 2 + 1;
    AsioEndpointConfig cconf = sconf;
    cconf.ports = to_ports(c.client_ports);
    if (c.key_seed) cconf.key_seed = *c.key_seed * 2 + 2;
    auto make = [&](boost::asio::io_context& io, const AsioEndpointConfig& conf, bool is_server) {
      return c.make_endpoint ? c.make_endpoint(io, conf, is_server) : std::make_unique<AsioEndpoint>(io, conf);
    };
    const std::unique_ptr<Endpoint> server_endpoint = make(server_io, sconf, true);
    const std::unique_ptr<Endpoint> client_endpoint = make(client_io, cconf, false);
    Endpoint& server = *server_endpoint;
    Endpoint& client = *client_endpoint;

    // Server: `slots` landing slots; client: the pattern, read at offset i % 251 for message i.
    std::vector<uint8_t> landing(slots * msg, 0);
    std::vector<uint8_t> pattern(msg + kPatternPeriod);
    for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 7 + (i >> 8));
    Context& sctx = server.context();
    Context& cctx = client.context();
    CompletionQueue& scq = sctx.CreateCq();
    CompletionQueue& ccq = cctx.CreateCq();
    Qp& sqp = sctx.CreateQp(qpc, scq, scq);
    Qp& cqp = cctx.CreateQp(qpc, ccq, ccq);
    sqp.Connect(cqp.qpn(), cqp.config().initial_psn);
    cqp.Connect(sqp.qpn(), sqp.config().initial_psn);
    const MemoryRegion smr = sctx.RegisterMemory(landing, kAccessRemoteWrite);
    const MemoryRegion cmr = cctx.RegisterMemory(pattern, kAccessLocal);
    std::vector<EvRoute> croutes, sroutes;
    for (const auto& e : c.evs) croutes.push_back({e.plane, e.destination, e.udp_source_port});
    for (const auto& e : reverse) sroutes.push_back({e.plane, e.destination, e.udp_source_port});
    client.SetRoutes(cqp.qpn(), croutes);
    server.SetRoutes(sqp.qpn(), sroutes);

    // --- server side (server thread only) ---
    std::atomic<uint64_t> verified_messages{0};
    uint64_t bytes_verified = 0, verify_failures = 0;
    std::string server_error;
    for (uint32_t i = 0; i < slots; ++i) sqp.PostRecv(i);
    server.SetOnProgress([&] {
      while (auto wc = scq.Poll()) {
        if (wc->status != WcStatus::kSuccess) {
          if (server_error.empty()) server_error = "server completion: " + std::string(ToString(wc->status));
          continue;
        }
        const uint32_t index = wc->immediate.value_or(0);
        const uint8_t* got = landing.data() + (index % slots) * msg;
        if (wc->byte_len == msg && std::memcmp(got, pattern.data() + index % kPatternPeriod, msg) == 0)
          bytes_verified += msg;
        else
          ++verify_failures;
        sqp.PostRecv(index);
        verified_messages.fetch_add(1, std::memory_order_release);
      }
    });

    // --- client side (client thread only) ---
    using Clock = std::chrono::steady_clock;
    const uint64_t total_messages = c.total_bytes ? (c.total_bytes + msg - 1) / msg : UINT64_MAX;
    uint64_t posted = 0, completed = 0;
    std::vector<Timestamp> post_time(slots);
    std::vector<double> latencies;
    std::string client_error;
    Clock::time_point start, end, stop_posting_at;
    bool done = false;
    auto post_more = [&] {
      const bool time_up = c.total_bytes == 0 && Clock::now() >= stop_posting_at;
      while (!time_up && posted < total_messages && posted - completed < slots) {
        WriteRequest wr;
        wr.wr_id = posted;
        wr.lkey = cmr.lkey;
        wr.local_addr = cmr.va + posted % kPatternPeriod;
        wr.length = static_cast<uint32_t>(msg);
        wr.remote_addr = smr.va + (posted % slots) * msg;
        wr.rkey = smr.rkey;
        wr.immediate = static_cast<uint32_t>(posted);
        if (cqp.PostWrite(wr) != PostResult::kOk) break;
        post_time[posted % slots] = AsioEndpoint::Now();
        ++posted;
      }
    };
    client.SetOnProgress([&] {
      while (auto wc = ccq.Poll()) {
        if (wc->status != WcStatus::kSuccess) {
          if (client_error.empty()) client_error = "client completion: " + std::string(ToString(wc->status));
          continue;
        }
        latencies.push_back((AsioEndpoint::Now() - post_time[wc->wr_id % slots]).microseconds());
        ++completed;
      }
      while (auto e = cctx.PollEvent()) {
        if (auto* s = std::get_if<EvStateChanged>(&*e))
          r.ev_events.push_back("ev " + std::to_string(s->ev) + " " + std::string(ToString(s->from)) + "->" +
                                std::string(ToString(s->to)) + " (" + std::string(ToString(s->reason)) + ")");
      }
      if (!client_error.empty() || cqp.state() == QpState::kError) {
        if (client_error.empty()) client_error = "client QP error";
        done = true;
      } else {
        post_more();
        const bool finished_posting = posted >= total_messages || (c.total_bytes == 0 && Clock::now() >= stop_posting_at);
        if (finished_posting && completed == posted) done = true;
      }
      if (done) {
        end = Clock::now();
        client.Stop();
        client_io.stop();
      }
    });

    const double cpu0 = ProcessCpuSeconds();
    auto server_guard = boost::asio::make_work_guard(server_io);
    server.Start();
    std::thread server_thread([&] { server_io.run(); });
    // Watchdog: a periodic wakeup on the client so time-based stopping never waits for traffic.
    boost::asio::steady_timer watchdog(client_io);
    const auto hard_deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(c.timeout_seconds > 0 ? c.timeout_seconds : c.total_bytes ? 60.0 : c.duration_seconds + 10.0));
    std::function<void()> tick = [&] {
      watchdog.expires_after(std::chrono::milliseconds(5));
      watchdog.async_wait([&](const boost::system::error_code& ec) {
        if (ec || done) return;
        if (Clock::now() > hard_deadline) {
          client_error = "timed out";
          done = true;
          end = Clock::now();
          client.Stop();
          client_io.stop();
          return;
        }
        post_more();
        client.Kick();
        if (completed == posted && (posted >= total_messages || Clock::now() >= stop_posting_at) && c.total_bytes == 0) {
          done = true;
          end = Clock::now();
          client.Stop();
          client_io.stop();
          return;
        }
        tick();
      });
    };
    std::thread client_thread([&] {
      boost::asio::post(client_io, [&] {
        start = Clock::now();
        stop_posting_at = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(c.duration_seconds));
        client.Start();
        post_more();
        client.Kick();
        tick();
      });
      client_io.run();
    });
    client_thread.join();
    // Let the server finish verifying what the client saw completed (it is at most a few
    // packets behind: completions at the client imply placement at the server).
    const auto verify_deadline = Clock::now() + std::chrono::seconds(2);
    while (verified_messages.load(std::memory_order_acquire) < completed && Clock::now() < verify_deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    boost::asio::post(server_io, [&] { server.Stop(); server_guard.reset(); server_io.stop(); });
    server_thread.join();
    const double cpu = ProcessCpuSeconds() - cpu0;

    r.seconds = std::chrono::duration<double>(end - start).count();
    r.messages = completed;
    r.bytes_verified = bytes_verified;
    r.verify_failures = verify_failures + (verified_messages.load() < completed ? completed - verified_messages.load() : 0);
    r.goodput_gbps = r.seconds > 0 ? bytes_verified * 8 / r.seconds / 1e9 : 0;
    r.messages_per_second = r.seconds > 0 ? completed / r.seconds : 0;
    r.latency_us_p50 = Percentile(latencies, 0.50);
    r.latency_us_p90 = Percentile(latencies, 0.90);
    r.latency_us_p99 = Percentile(latencies, 0.99);
    r.latency_us_max = latencies.empty() ? 0 : *std::max_element(latencies.begin(), latencies.end());
    r.packets_sent = cqp.stats().data_packets_sent + cqp.stats().retransmissions;
    r.retransmissions = cqp.stats().retransmissions;
    r.rto_fired = cqp.stats().rto_fired;
    r.srtt_us = cqp.srtt().microseconds();
    r.min_rtt_us = cqp.min_rtt().microseconds();
    r.congestion_window_bytes = cqp.congestion_window().count;
    r.cpu_seconds = cpu;
    r.cpu_seconds_per_gb = bytes_verified ? cpu / (bytes_verified / 1e9) : 0;
    if (auto* a = dynamic_cast<AsioEndpoint*>(&client)) r.client_io = a->stats();
    if (auto* a = dynamic_cast<AsioEndpoint*>(&server)) r.server_io = a->stats();
    const auto server_evs = sqp.ListEvs();
    for (const auto& s : cqp.ListEvs()) {
      PerfEvResult e;
      e.id = s.id;
      e.plane = s.plane;
      e.state = std::string(ToString(s.state));
      e.tx_data = s.counters.tx_data;
      e.tx_retransmits = s.counters.tx_retransmits;
      e.tx_probes = s.counters.tx_probes;
      e.rx_packets = s.counters.rx_packets;
      e.losses = s.counters.losses;
      e.spurious_losses = s.counters.spurious_losses;
      if (s.id < server_evs.size()) {
        e.server_tx_acks = server_evs[s.id].counters.tx_acks;
        e.server_rx_packets = server_evs[s.id].counters.rx_packets;
      }
      r.evs.push_back(e);
    }
    r.error = !client_error.empty() ? client_error : server_error;
    if (r.error.empty() && r.verify_failures) r.error = "byte verification failed";
    if (r.error.empty() && c.total_bytes && completed < total_messages) r.error = "incomplete";
    r.ok = r.error.empty();
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = e.what();
  }
  return r;
}

nlohmann::json PerfResult::ToJson() const {
  nlohmann::json evs_json = nlohmann::json::array();
  for (const auto& e : evs)
    evs_json.push_back({{"id", e.id}, {"plane", e.plane}, {"state", e.state}, {"tx_data", e.tx_data},
                        {"tx_retransmits", e.tx_retransmits}, {"tx_probes", e.tx_probes},
                        {"rx_packets", e.rx_packets}, {"losses", e.losses}, {"spurious_losses", e.spurious_losses}, {"server_tx_acks", e.server_tx_acks},
                        {"server_rx_packets", e.server_rx_packets}});
  auto io = [](const AsioEndpointStats& s) {
    return nlohmann::json{{"rx_datagrams", s.rx_datagrams}, {"rx_syscalls", s.rx_syscalls},
                          {"tx_datagrams", s.tx_datagrams}, {"tx_syscalls", s.tx_syscalls},
                          {"tx_dropped", s.tx_dropped}, {"unroutable", s.unroutable},
                          {"timer_wakeups", s.timer_wakeups}, {"tx_gso_messages", s.tx_gso_messages},
                          {"rx_gro_messages", s.rx_gro_messages}};
  };
  return {{"ok", ok}, {"error", error}, {"transport", transport}, {"ev_mode", ev_mode},
          {"seconds", seconds}, {"messages", messages}, {"bytes_verified", bytes_verified},
          {"verify_failures", verify_failures}, {"goodput_gbps", goodput_gbps},
          {"messages_per_second", messages_per_second},
          {"latency_us", {{"p50", latency_us_p50}, {"p90", latency_us_p90}, {"p99", latency_us_p99}, {"max", latency_us_max}}},
          {"packets_sent", packets_sent}, {"retransmissions", retransmissions}, {"rto_fired", rto_fired},
          {"srtt_us", srtt_us}, {"min_rtt_us", min_rtt_us}, {"congestion_window_bytes", congestion_window_bytes},
          {"cpu_seconds", cpu_seconds}, {"cpu_seconds_per_gb", cpu_seconds_per_gb},
          {"client_io", io(client_io)}, {"server_io", io(server_io)},
          {"evs", evs_json}, {"ev_events", ev_events}};
}

}  // namespace mrclab::mrc
