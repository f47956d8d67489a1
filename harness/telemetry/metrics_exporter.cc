#include "harness/telemetry/metrics_exporter.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "emulator/errors.h"

namespace mrclab::harness {
namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;
using prometheus::Labels;

const std::vector<std::string> kJobStates = {"idle", "running", "completed", "interrupted",
                                             "failed"};
const std::vector<std::string> kEvStates = {"good", "assumed_bad", "denied"};

std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

struct BindAddress {
  std::string host;  // as given, brackets included for IPv6
  uint16_t port = 0;
  sockaddr_storage sa{};
  socklen_t sa_len = 0;
};

// `field` names what gave the address in the error.
BindAddress ParseBind(const std::string& bind, const std::string& field = "metrics exporter") {
  auto fail = [&](const std::string& why) -> BindAddress {
    throw emulator::InputError(field + ": bad bind address '" + bind + "': " + why);
  };
  const size_t colon = bind.rfind(':');
  if (colon == std::string::npos || colon == 0) return fail("expected HOST:PORT");
  BindAddress out;
  out.host = bind.substr(0, colon);
  const std::string port = bind.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535)
    return fail("port must be a number 0..65535");
  out.port = static_cast<uint16_t>(std::stoul(port));
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']') {
    auto* sa6 = reinterpret_cast<sockaddr_in6*>(&out.sa);
    sa6->sin6_family = AF_INET6;
    sa6->sin6_port = htons(out.port);
    if (inet_pton(AF_INET6, out.host.substr(1, out.host.size() - 2).c_str(), &sa6->sin6_addr) != 1)
      return fail("not an IPv6 address");
    out.sa_len = sizeof(sockaddr_in6);
  } else {
    auto* sa4 = reinterpret_cast<sockaddr_in*>(&out.sa);
    sa4->sin_family = AF_INET;
    sa4->sin_port = htons(out.port);
    if (inet_pton(AF_INET, out.host.c_str(), &sa4->sin_addr) != 1)
      return fail("host must be an IPv4 address or [IPv6 address]");
    out.sa_len = sizeof(sockaddr_in);
  }
  return out;
}

// Why listening on the address fails, asked of the kernel with a socket of our own (civetweb
// only says that it could not bind). Empty if it can be listened on now.
std::string ListenError(const BindAddress& address) {
  int fd = socket(address.sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::strerror(errno);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // as civetweb does
  std::string why;
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address.sa), address.sa_len) != 0 ||
      listen(fd, 1) != 0)
    why = std::strerror(errno);
  close(fd);
  return why;
}

}  // namespace

struct DrillMetrics::Impl {
  BindAddress address;
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::unique_ptr<prometheus::Exposer> exposer;
  uint16_t port = 0;
  uint16_t taken_port = 0;

  Family<Histogram>* step_seconds;
  Family<Counter>* steps_completed;
  Family<Gauge>* job_state;
  Family<Gauge>* faults_active;
  Family<Counter>* faults_applied;
  Family<Gauge>* evs;
  Family<Gauge>* ev_state;
  Family<Counter>* ev_tx;
  Family<Counter>* ev_retransmits;
  Family<Counter>* retransmissions;
  Family<Counter>* link_rx, *link_tx, *link_rx_dropped, *link_tx_dropped;

  std::mutex mu;  // guards the two maps below
  std::map<std::pair<const void*, Labels>, uint64_t> last_totals;
  std::map<std::pair<const void*, Labels>, std::set<std::string>> state_sets;

  Family<Counter>* CounterFamily(const std::string& name, const std::string& help) {
    return &prometheus::BuildCounter().Name(name).Help(help).Register(*registry);
  }
  Family<Gauge>* GaugeFamily(const std::string& name, const std::string& help) {
    return &prometheus::BuildGauge().Name(name).Help(help).Register(*registry);
  }

  // Counter fed a cumulative total: grows by the difference to the last total seen.
  void SetTotal(Family<Counter>* family, const Labels& labels, uint64_t total) {
    std::lock_guard lock(mu);
    uint64_t& last = last_totals[{family, labels}];
    const uint64_t delta = total >= last ? total - last : total;  // lower: counting anew
    last = total;
    family->Add(labels).Increment(static_cast<double>(delta));
  }

  // One gauge per state: 1 for `state`, 0 for every other state known for these labels.
  void OneHot(Family<Gauge>* family, Labels labels, const std::vector<std::string>& known,
              const std::string& state) {
    std::lock_guard lock(mu);
    auto [it, fresh] = state_sets.try_emplace({family, labels});
    if (fresh) it->second.insert(known.begin(), known.end());
    it->second.insert(state);
    for (const std::string& s : it->second) {
      labels["state"] = s;
      family->Add(labels).Set(s == state ? 1 : 0);
    }
  }
};

DrillMetrics::DrillMetrics(const MetricsOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.address = ParseBind(options.bind);
  d.step_seconds = &prometheus::BuildHistogram()
                        .Name("mrclab_step_seconds")
                        .Help("Duration of one training step, per transport")
                        .Register(*d.registry);
  d.steps_completed = d.CounterFamily("mrclab_steps_completed_total", "Training steps completed");
  d.job_state = d.GaugeFamily("mrclab_job_state", "1 for the job's current state, else 0");
  d.faults_active = d.GaugeFamily("mrclab_faults_active", "Faults in effect now");
  d.faults_applied = d.CounterFamily("mrclab_faults_applied_total", "Faults applied, per kind");
  d.evs = d.GaugeFamily("mrclab_evs", "EVs of a transport's job in each state, per plane");
  d.ev_state = d.GaugeFamily("mrclab_ev_state", "1 for an entropy value's current state, else 0");
  d.ev_tx = d.CounterFamily("mrclab_ev_tx_packets_total", "Packets sent on an entropy value");
  d.ev_retransmits =
      d.CounterFamily("mrclab_ev_retransmits_total", "Packets retransmitted on an entropy value");
  d.retransmissions =
      d.CounterFamily("mrclab_retransmissions_total", "Packets retransmitted, per transport");
  d.link_rx = d.CounterFamily("mrclab_link_rx_packets_total", "Packets received by a link end");
  d.link_tx = d.CounterFamily("mrclab_link_tx_packets_total", "Packets sent by a link end");
  d.link_rx_dropped =
      d.CounterFamily("mrclab_link_rx_dropped_total", "Packets dropped on receive at a link end");
  d.link_tx_dropped =
      d.CounterFamily("mrclab_link_tx_dropped_total", "Packets dropped on send at a link end");
  d.faults_active->Add({}).Set(0);

  std::string bind = options.bind;
  if (options.free_port_if_taken && d.address.port != 0 && ListenError(d.address) == std::strerror(EADDRINUSE)) {
    d.taken_port = d.address.port;
    bind = d.address.host + ":0";
  }
  try {
    d.exposer = std::make_unique<prometheus::Exposer>(bind, 2);
  } catch (const std::exception& e) {
    std::string why = ListenError(ParseBind(bind));
    throw emulator::InputError("metrics exporter: cannot listen on " + bind + ": " + (why.empty() ? e.what() : why));
  }
  d.exposer->RegisterCollectable(d.registry);
  const std::vector<int> ports = d.exposer->GetListeningPorts();
  if (ports.empty() || ports[0] <= 0)
    throw std::runtime_error("metrics exporter: no listening port for " + options.bind);
  d.port = static_cast<uint16_t>(ports[0]);
}

DrillMetrics::~DrillMetrics() {
  // civetweb's listening thread looks at its stop flag only between polls of up to 2 s; a
  // connection wakes it, so that stopping takes milliseconds instead of seconds.
  std::atomic<bool> stopped{false};
  std::thread waker([&] {
    sockaddr_storage to = impl_->address.sa;
    if (to.ss_family == AF_INET) {
      auto* sa4 = reinterpret_cast<sockaddr_in*>(&to);
      sa4->sin_port = htons(impl_->port);
      if (sa4->sin_addr.s_addr == htonl(INADDR_ANY)) sa4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    } else {
      auto* sa6 = reinterpret_cast<sockaddr_in6*>(&to);
      sa6->sin6_port = htons(impl_->port);
      if (IN6_IS_ADDR_UNSPECIFIED(&sa6->sin6_addr)) sa6->sin6_addr = in6addr_loopback;
    }
    while (!stopped) {
      int fd = socket(to.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd >= 0) {
        connect(fd, reinterpret_cast<sockaddr*>(&to), impl_->address.sa_len);
        close(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  impl_->exposer.reset();
  stopped = true;
  waker.join();
}

uint16_t DrillMetrics::port() const { return impl_->port; }
uint16_t DrillMetrics::taken_port() const { return impl_->taken_port; }

std::string MetricsBindProblem(const std::string& bind) { return ListenError(ParseBind(bind)); }

void CheckMetricsBind(const std::string& bind, const std::string& field) { ParseBind(bind, field); }

std::string DrillMetrics::url() const {
  std::string host = impl_->address.host;
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host == "[::]") host = "[::1]";
  return "http://" + host + ":" + std::to_string(impl_->port) + "/metrics";
}

void DrillMetrics::ObserveStep(const std::string& transport, double seconds) {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60};
  impl_->step_seconds->Add({{"transport", transport}}, kBuckets).Observe(seconds);
}

void DrillMetrics::StepsCompleted(const std::string& transport, uint64_t total) {
  impl_->SetTotal(impl_->steps_completed, {{"transport", transport}}, total);
}

void DrillMetrics::JobState(const std::string& transport, const std::string& state) {
  impl_->OneHot(impl_->job_state, {{"transport", transport}}, kJobStates, state);
}

void DrillMetrics::FaultsActive(int n) { impl_->faults_active->Add({}).Set(n); }

void DrillMetrics::FaultApplied(const std::string& kind) {
  impl_->faults_applied->Add({{"kind", kind}}).Increment();
}

void DrillMetrics::EvCounts(const std::string& transport,
                            const std::map<int, std::map<std::string, int>>& per_plane) {
  for (const auto& [plane, counts] : per_plane) {
    std::map<std::string, int> all;
    for (const std::string& s : kEvStates) all[s] = 0;
    for (const auto& [state, n] : counts) all[Lower(state)] += n;
    for (const auto& [state, n] : all)
      impl_->evs->Add({{"transport", transport}, {"plane", std::to_string(plane)}, {"state", state}}).Set(n);
  }
}

void DrillMetrics::EvState(const std::string& transport, const std::string& qp, int ev, int plane,
                           const std::string& state) {
  impl_->OneHot(impl_->ev_state,
                {{"transport", transport}, {"qp", qp}, {"ev", std::to_string(ev)},
                 {"plane", std::to_string(plane)}},
                kEvStates, Lower(state));
}

void DrillMetrics::EvPackets(const std::string& transport, const std::string& qp, int ev,
                             uint64_t tx_total, uint64_t retransmits_total) {
  const Labels labels = {{"transport", transport}, {"qp", qp}, {"ev", std::to_string(ev)}};
  impl_->SetTotal(impl_->ev_tx, labels, tx_total);
  impl_->SetTotal(impl_->ev_retransmits, labels, retransmits_total);
}

void DrillMetrics::Retransmissions(const std::string& transport, uint64_t total) {
  impl_->SetTotal(impl_->retransmissions, {{"transport", transport}}, total);
}

void DrillMetrics::LinkCounters(const std::string& link, const std::string& end,
                                uint64_t rx_packets, uint64_t tx_packets, uint64_t rx_dropped,
                                uint64_t tx_dropped) {
  const Labels labels = {{"link", link}, {"end", end}};
  impl_->SetTotal(impl_->link_rx, labels, rx_packets);
  impl_->SetTotal(impl_->link_tx, labels, tx_packets);
  impl_->SetTotal(impl_->link_rx_dropped, labels, rx_dropped);
  impl_->SetTotal(impl_->link_tx_dropped, labels, tx_dropped);
}

}  // namespace mrclab::harness
