#include "harness/drill/scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "emulator/resolved_lab.h"
#include "emulator/strict_yaml.h"
#include "harness/drill/quantities.h"

namespace mrclab::harness {

const char* const kSloNames[] = {"no_interruption", "step_time_p99_ratio", "step_time_max",
                                 "bytes_lost", "recovery_time_max", nullptr};

namespace {

namespace fs = std::filesystem;

bool In(const char* const* list, const std::string& s) {
  for (; *list; ++list)
    if (s == *list) return true;
  return false;
}

std::string Join(const char* const* list) {
  std::string out;
  for (; *list; ++list) out += (out.empty() ? "" : ", ") + std::string(*list);
  return out;
}

// A mapping being read: every key must be known, every value of the expected type.
class Fields {
 public:
  Fields(const std::string& file, std::string path, const YAML::Node& node, std::set<std::string> known)
      : file_(file), path_(std::move(path)), node_(node) {
    if (!node.IsMap()) Fail(path_.empty() ? "(document)" : path_, "expected a mapping");
    for (const auto& kv : node) {
      const std::string key = kv.first.as<std::string>();
      if (!known.count(key)) {
        std::string names;
        for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
        Fail(Field(key), "unknown key (known keys: " + names + ")");
      }
    }
  }
  bool Has(const std::string& key) const { return static_cast<bool>(node_[key]); }
  YAML::Node Node(const std::string& key) const { return node_[key]; }
  std::string Field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  [[noreturn]] void Fail(const std::string& field, const std::string& reason) const {
    throw ScenarioError(file_, field, reason);
  }
  std::string String(const std::string& key, const std::string& fallback = {}) const {
    if (!Has(key)) return fallback;
    const YAML::Node n = node_[key];
    if (!n.IsScalar()) Fail(Field(key), "expected a single value");
    return n.as<std::string>();
  }
  std::string Required(const std::string& key) const {
    if (!Has(key)) Fail(Field(key), "required");
    return String(key);
  }
  // Parses a scalar with fn; its std::invalid_argument becomes an error at this field.
  template <typename T, typename Fn>
  T Parse(const std::string& key, T fallback, Fn fn) const {
    if (!Has(key)) return fallback;
    try {
      return fn(String(key));
    } catch (const ScenarioError&) {
      throw;
    } catch (const std::exception& e) {
      Fail(Field(key), e.what());
    }
  }
  long Int(const std::string& key, long fallback, long lo, long hi) const {
    return Parse<long>(key, fallback, [&](const std::string& s) {
      size_t used = 0;
      long v = 0;
      try {
        v = std::stol(s, &used);
      } catch (const std::out_of_range&) {
        throw std::invalid_argument(s + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
      } catch (const std::invalid_argument&) {
        used = 0;
      }
      if (used == 0 || used != s.size()) throw std::invalid_argument("'" + s + "' is not a whole number");
      if (v < lo || v > hi)
        throw std::invalid_argument(std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
      return v;
    });
  }
  double Seconds(const std::string& key, double fallback) const {
    return Parse<double>(key, fallback, [](const std::string& s) { return ParseSeconds(s); });
  }
  std::vector<std::string> Strings(const std::string& key) const {
    std::vector<std::string> out;
    if (!Has(key)) return out;
    const YAML::Node n = node_[key];
    if (n.IsScalar()) return {n.as<std::string>()};
    if (!n.IsSequence()) Fail(Field(key), "expected a value or a list");
    for (const auto& item : n) {
      if (!item.IsScalar()) Fail(Field(key), "expected a list of values");
      out.push_back(item.as<std::string>());
    }
    return out;
  }

 private:
  const std::string& file_;
  std::string path_;
  YAML::Node node_;
};

JobSpec ParseJob(const std::string& file, const YAML::Node& node) {
  Fields f(file, "job", node, {"hosts", "ranks_per_host", "collectives", "compute", "step_timeout",
                               "warmup_steps", "baseline_steps", "tail_steps", "mtu", "io_threads", "timers", "payload",
                               "key_seed"});
  JobSpec job;
  if (f.Has("hosts")) {
    const YAML::Node hosts_node = f.Node("hosts");
    const bool number = hosts_node.IsScalar() && !hosts_node.Scalar().empty() &&
                        std::all_of(hosts_node.Scalar().begin(), hosts_node.Scalar().end(), ::isdigit);
    if (number) {
      job.host_count = f.Int("hosts", 0, 2, 1 << 21);
    } else {
      auto hosts = f.Strings("hosts");
      if (!(hosts.size() == 1 && hosts[0] == "all")) job.hosts = hosts;
    }
  }
  job.ranks_per_host = f.Int("ranks_per_host", 1, 1, 16);
  job.compute_seconds = f.Seconds("compute", job.compute_seconds);
  job.step_timeout_seconds = f.Seconds("step_timeout", job.step_timeout_seconds);
  if (job.step_timeout_seconds <= 0) f.Fail(f.Field("step_timeout"), "must be more than 0");
  job.warmup_steps = f.Int("warmup_steps", job.warmup_steps, 0, 100000);
  job.baseline_steps = f.Int("baseline_steps", job.baseline_steps, 3, 100000);
  job.tail_steps = f.Int("tail_steps", job.tail_steps, 0, 100000);
  if (f.Has("mtu")) job.mtu = f.Int("mtu", 0, 256, 8192);
  job.io_threads = f.Int("io_threads", job.io_threads, 1, 64);
  if (f.Has("key_seed")) job.key_seed = f.Int("key_seed", 0, 0, 1L << 40);
  const std::string timers = f.String("timers", "realtime");
  if (timers != "realtime" && timers != "fabric") f.Fail(f.Field("timers"), "expected realtime or fabric");
  job.timers = timers == "fabric" ? TimerScale::kFabric : TimerScale::kRealtime;
  const std::string payload = f.String("payload", "real");
  if (payload != "real" && payload != "virtual") f.Fail(f.Field("payload"), "expected real or virtual");
  job.payload = payload == "virtual" ? PayloadMode::kVirtual : PayloadMode::kReal;
  if (!f.Has("collectives")) f.Fail(f.Field("collectives"), "required (e.g. [{kind: all_reduce, size: 1MiB}])");
  const YAML::Node list = f.Node("collectives");
  if (!list.IsSequence() || list.size() == 0) f.Fail(f.Field("collectives"), "expected a non-empty list");
  for (size_t i = 0; i < list.size(); ++i) {
    Fields c(file, "job.collectives[" + std::to_string(i) + "]", list[i], {"kind", "size"});
    CollectiveSpec spec;
    const std::string kind = c.Required("kind");
    auto k = ParseCollectiveKind(kind);
    if (!k) c.Fail(c.Field("kind"), "unknown collective '" + kind + "' (all_reduce, all_gather, reduce_scatter, all_to_all)");
    spec.kind = *k;
    spec.bytes = c.Parse<uint64_t>("size", spec.bytes, [](const std::string& s) { return ParseBytes(s); });
    if (spec.bytes == 0 || spec.bytes > (1ull << 30)) c.Fail(c.Field("size"), "must be between 1 byte and 1GiB");
    job.collectives.push_back(spec);
  }
  return job;
}

TransportSpec ParseTransport(const std::string& file, const std::string& path, const YAML::Node& node) {
  TransportSpec t;
  if (node.IsScalar()) {  // shorthand: "mrc" or "rc"
    const std::string name = node.as<std::string>();
    if (name != "mrc" && name != "rc") throw ScenarioError(file, path, "expected mrc, rc or a mapping");
    t.name = name;
    t.field = path;
    t.transport = name == "rc" ? mrc::TransportMode::kRc : mrc::TransportMode::kMrc;
    return t;
  }
  Fields f(file, path, node,
           {"name", "transport", "stack", "hosts", "ev_mode", "evs", "qps_per_peer", "min_active", "ack_timeout",
            "retry_count"});
  t.field = path;
  if (f.Has("hosts")) {
    t.hosts = f.Strings("hosts");
    if (t.hosts.empty()) f.Fail(f.Field("hosts"), "an empty list: omit it to run on job.hosts");
  }
  const std::string transport = f.String("transport", "mrc");
  if (transport != "mrc" && transport != "rc") f.Fail(f.Field("transport"), "expected mrc or rc");
  t.transport = transport == "rc" ? mrc::TransportMode::kRc : mrc::TransportMode::kMrc;
  const std::string stack = f.String("stack", "model");
  if (stack != "model" && stack != "kernel") f.Fail(f.Field("stack"), "expected model or kernel");
  t.stack = stack == "kernel" ? TransportStack::kKernel : TransportStack::kModel;
  if (t.stack == TransportStack::kKernel) {
    if (t.transport != mrc::TransportMode::kRc)
      f.Fail(f.Field("stack"), "kernel: the kernel's RDMA stack runs RC only (transport: rc)");
    for (const char* key : {"ev_mode", "evs", "min_active"})
      if (f.Has(key)) f.Fail(f.Field(key), "the kernel's RC has no EVs (one path per QP, its UDP source port)");
  }
  t.name = f.String("name", t.stack == TransportStack::kKernel ? "rc_kernel" : transport);
  const auto mode = mrc::ParseEvMode(f.String("ev_mode", "srv6"));
  if (!mode) f.Fail(f.Field("ev_mode"), "expected srv6 or udp");
  t.ev_mode = *mode;
  t.evs = f.Int("evs", t.evs, 1, 256);
  t.qps_per_peer = f.Int("qps_per_peer", t.qps_per_peer, 1, kMaxQpsPerPeer);
  if (f.Has("min_active")) t.min_active = f.Int("min_active", 1, 0, t.evs);
  for (const char* key : {"ack_timeout", "retry_count"})
    if (f.Has(key) && t.transport != mrc::TransportMode::kRc)
      f.Fail(f.Field(key), "RC only (MRC's retransmit timer follows the round-trip time)");
  if (f.Has("ack_timeout")) {
    t.ack_timeout_seconds = f.Seconds("ack_timeout", 0);
    if (*t.ack_timeout_seconds < 1e-3 || *t.ack_timeout_seconds > 60)
      f.Fail(f.Field("ack_timeout"), "must be 1ms..60s");
  }
  if (f.Has("retry_count")) t.retry_count = f.Int("retry_count", 7, 0, 7);  // 3 bits, as in a NIC
  return t;
}

TargetSpec ParseTarget(const Fields& fault, const std::string& file) {
  TargetSpec t;
  if (!fault.Has("target")) fault.Fail(fault.Field("target"), "required");
  const YAML::Node node = fault.Node("target");
  if (node.IsScalar()) {
    t.name = node.as<std::string>();
    return t;
  }
  Fields f(file, fault.Field("target"), node, {"select", "plane", "count", "from", "to", "evs", "host"});
  t.select = f.String("select");
  if (f.Has("plane")) t.plane = f.Int("plane", 0, 0, 14);
  t.count = f.Int("count", 1, 1, 1 << 21);  // the lab bounds it: fault_plan.cc
  t.from = f.String("from");
  t.to = f.String("to");
  t.host = f.String("host");
  for (const auto& s : f.Strings("evs")) {
    size_t used = 0;
    int ev = -1;
    try {
      ev = std::stoi(s, &used);
    } catch (const std::exception&) {
    }
    if (ev < 0 || used != s.size()) f.Fail(f.Field("evs"), "'" + s + "' is not an EV number");
    t.evs.push_back(ev);
  }
  static const std::set<std::string> selectors = {"leaf_spine_link", "host_link", "spine", "leaf", "switch", "plane"};
  if (!t.select.empty() && !selectors.count(t.select))
    f.Fail(f.Field("select"), "unknown selector '" + t.select + "' (leaf_spine_link, host_link, spine, leaf, switch, plane)");
  return t;
}

FaultSpec ParseFault(const std::string& file, size_t index, const YAML::Node& node) {
  FaultSpec s;
  s.field = "faults[" + std::to_string(index) + "]";
  Fields f(file, s.field, node, {"at", "kind", "target", "duration", "count", "down", "up", "random",
                                 "direction", "rate", "mode", "config", "revert_config"});
  using emulator::FaultKind;
  const std::string kind = f.Required("kind");
  const auto parsed = emulator::ParseFaultKind(kind);
  if (!parsed) f.Fail(f.Field("kind"), "unknown fault kind '" + kind + "' (" + emulator::FaultKindNames() + ")");
  s.kind = *parsed;
  if (!f.Has("at")) f.Fail(f.Field("at"), "required (seconds after the baseline steps, e.g. 5s)");
  s.at = f.Seconds("at", 0);
  s.target = ParseTarget(f, file);
  if (f.Has("duration")) {
    s.duration = f.Seconds("duration", 0);
    if (*s.duration <= 0) f.Fail(f.Field("duration"), "must be more than 0");
  }
  auto only = [&](const std::string& key, std::initializer_list<FaultKind> kinds) {
    if (!f.Has(key)) return;
    for (FaultKind k : kinds)
      if (s.kind == k) return;
    f.Fail(f.Field(key), "does not apply to " + kind);
  };
  only("count", {FaultKind::kFlap});
  only("down", {FaultKind::kFlap});
  only("up", {FaultKind::kFlap});
  only("random", {FaultKind::kFlap});
  only("direction", {FaultKind::kBlackhole, FaultKind::kLoss});
  only("mode", {FaultKind::kBgpReset});
  only("config", {FaultKind::kConfigChange});
  only("revert_config", {FaultKind::kConfigChange});
  if (s.kind == FaultKind::kFlap) {
    s.count = f.Int("count", 3, 1, 10000);
    s.down_seconds = f.Seconds("down", s.down_seconds);
    s.up_seconds = f.Seconds("up", s.up_seconds);
    if (s.down_seconds <= 0 || s.up_seconds <= 0) f.Fail(s.field, "down and up must be more than 0");
    const std::string random = f.String("random", "false");
    if (random != "true" && random != "false") f.Fail(f.Field("random"), "expected true or false");
    s.random = random == "true";
    if (s.duration) f.Fail(f.Field("duration"), "a flap lasts count x (down + up); use count");
  }
  const auto direction = emulator::ParseDirection(f.String("direction", "both"));
  if (!direction) f.Fail(f.Field("direction"), "expected both, a-b or b-a");
  s.direction = *direction;
  if (s.kind == FaultKind::kLoss) {
    if (!f.Has("rate")) f.Fail(f.Field("rate"), "required for loss (e.g. 2%)");
    s.loss_rate = f.Parse<double>("rate", 0, [](const std::string& t) { return ParseFraction(t); });
    if (s.loss_rate <= 0) f.Fail(f.Field("rate"), "must be more than 0");
  } else if (s.kind == FaultKind::kRate) {
    if (!f.Has("rate")) f.Fail(f.Field("rate"), "required for rate (e.g. 100Mbit)");
    s.rate_bps = f.Parse<uint64_t>("rate", 0, [](const std::string& t) { return emulator::ParseRate(t); });
  } else if (f.Has("rate")) {
    f.Fail(f.Field("rate"), "does not apply to " + kind);
  }
  s.bgp_mode = f.String("mode", "clear");
  if (s.bgp_mode != "clear" && s.bgp_mode != "restart") f.Fail(f.Field("mode"), "expected clear or restart");
  s.config = f.Strings("config");
  s.revert_config = f.Strings("revert_config");
  if (s.kind == FaultKind::kConfigChange && s.config.empty()) f.Fail(f.Field("config"), "required: FRR configuration lines");
  const TargetSpec& t = s.target;
  if (s.kind == FaultKind::kEvDeny && (t.from.empty() || t.to.empty()))
    f.Fail(f.Field("target"), "ev_deny needs {from: HOST, to: HOST, evs: [..]}");
  if (s.kind == FaultKind::kPortDisable && (t.host.empty() || !t.plane))
    f.Fail(f.Field("target"), "port_disable needs {host: HOST, plane: N}");
  return s;
}

SloSpec ParseSlo(const std::string& file, size_t index, const YAML::Node& node) {
  SloSpec s;
  s.field = "slos[" + std::to_string(index) + "]";
  Fields f(file, s.field, node, {"slo", "max", "transport"});
  s.slo = f.Required("slo");
  if (!In(kSloNames, s.slo)) f.Fail(f.Field("slo"), "unknown SLO '" + s.slo + "' (" + Join(kSloNames) + ")");
  if (s.slo != "no_interruption") {
    if (!f.Has("max")) f.Fail(f.Field("max"), "required for " + s.slo);
    s.max = f.Parse<double>("max", 0, [&](const std::string& t) {
      return s.slo == "step_time_max" || s.slo == "recovery_time_max" ? ParseSeconds(t) : ParseBound(t);
    });
  } else if (f.Has("max")) {
    f.Fail(f.Field("max"), "no_interruption takes no max");
  }
  s.transport = f.String("transport");
  return s;
}

std::string SecondsText(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", seconds);
  return buf;
}

// Sets s.lab (and s.lab_file_looked_for when a bare name names no file).
void ResolveLab(Scenario& s, const std::string& value, const std::string& base_dir) {
  if (emulator::IsLabFilePath(value)) {
    fs::path p(value);
    if (p.is_relative() && !emulator::PathExists(p)) p = fs::path(base_dir) / p;
    s.lab = p.string();  // existence is checked where the lab is loaded, with the file named
    return;
  }
  const fs::path shipped = (fs::path(base_dir) / ".." / "labs" / (value + ".yaml")).lexically_normal();
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(shipped, ec);
  if (emulator::PathExists(shipped)) {
    s.lab = (ec ? shipped : canonical).string();
    return;
  }
  s.lab = value;  // a deployed lab's name
  s.lab_file_looked_for = (ec ? shipped : canonical).string();
}

}  // namespace

Scenario ParseScenarioText(const std::string& text, const std::string& source, const std::string& base_dir) {
  const YAML::Node root = emulator::LoadStrictYaml(text, source);
  // A lab file given where a scenario belongs: say so, rather than that clos: is unknown.
  if (root.IsMap() && !root["job"] && !root["transports"])
    for (const char* lab_key : {"clos", "nodes", "links"})
      if (root[lab_key])
        throw ScenarioError(source, lab_key, "this is a lab file, not a scenario: deploy it with `mrclab deploy " +
                                                 source + "`, or name it in a scenario's lab: key");
  Fields f(source, "", root,
           {"name", "description", "lab", "backend", "seed", "job", "transports", "faults", "slos", "max_duration"});
  Scenario s;
  s.file = source;
  s.text = text;
  s.name = f.Required("name");
  // The name names the run directory: one plain file name.
  if (s.name.empty() || s.name.size() > 64 || s.name == "." || s.name == ".." ||
      s.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string::npos)
    f.Fail("name", "'" + s.name + "' must be 1-64 letters, digits, '.', '_' or '-' (it names the run directory)");
  s.description = f.String("description");
  ResolveLab(s, f.Required("lab"), base_dir);
  if (f.Has("backend")) {
    s.backend = emulator::ParseBackend(f.String("backend"));
    if (!s.backend) f.Fail("backend", "expected netns (emulated lab) or ns3 (simulation)");
  }
  s.seed = f.Int("seed", 1, 0, 1L << 40);
  if (!f.Has("job")) f.Fail("job", "required");
  s.job = ParseJob(source, f.Node("job"));
  s.max_duration_seconds = f.Seconds("max_duration", s.max_duration_seconds);
  if (s.max_duration_seconds <= 0) f.Fail("max_duration", "must be longer than 0 s: nothing could run");
  if (!f.Has("transports")) {
    s.transports.push_back(ParseTransport(source, "transports", YAML::Node("mrc")));
  } else {
    const YAML::Node list = f.Node("transports");
    if (!list.IsSequence() || list.size() == 0) f.Fail("transports", "expected a non-empty list");
    std::set<std::string> names;
    for (size_t i = 0; i < list.size(); ++i) {
      s.transports.push_back(ParseTransport(source, "transports[" + std::to_string(i) + "]", list[i]));
      if (!names.insert(s.transports.back().name).second)
        f.Fail("transports[" + std::to_string(i) + "].name", "duplicate name '" + s.transports.back().name + "'");
    }
  }
  if (f.Has("faults")) {
    const YAML::Node list = f.Node("faults");
    if (!list.IsSequence()) f.Fail("faults", "expected a list");
    for (size_t i = 0; i < list.size(); ++i) {
      s.faults.push_back(ParseFault(source, i, list[i]));
      if (s.faults.back().at >= s.max_duration_seconds)
        f.Fail(s.faults.back().field + ".at",
               "at " + SecondsText(s.faults.back().at) + " is not before max_duration (" +
                   SecondsText(s.max_duration_seconds) + "): the fault would never be applied");
    }
  }
  for (const TransportSpec& t : s.transports) {
    if (t.stack != TransportStack::kKernel) continue;
    for (const FaultSpec& fault : s.faults)
      if (fault.kind == emulator::FaultKind::kEvDeny || fault.kind == emulator::FaultKind::kPortDisable)
        f.Fail(fault.field + ".kind", std::string(ToString(fault.kind)) + " acts on our core's QPs; transport '" +
                                          t.name + "' is the kernel's RC (stack: kernel), which it cannot reach");
  }
  if (f.Has("slos")) {
    const YAML::Node list = f.Node("slos");
    if (!list.IsSequence()) f.Fail("slos", "expected a list");
    for (size_t i = 0; i < list.size(); ++i) {
      s.slos.push_back(ParseSlo(source, i, list[i]));
      const std::string& t = s.slos.back().transport;
      if (!t.empty() && std::none_of(s.transports.begin(), s.transports.end(),
                                     [&](const TransportSpec& x) { return x.name == t; }))
        f.Fail(s.slos.back().field + ".transport", "no transport named '" + t + "'");
    }
    if (s.slos.empty())
      f.Fail("slos", "an empty list judges nothing, and a drill judged by nothing cannot pass; omit slos for the "
                     "defaults (no_interruption for every MRC transport, bytes_lost max 0)");
  } else {
    // The question every drill asks: did MRC ride through, and was every byte delivered?
    for (const TransportSpec& t : s.transports)
      if (t.transport == mrc::TransportMode::kMrc) s.slos.push_back({"slos (default)", "no_interruption", 0, t.name});
    s.slos.push_back({"slos (default)", "bytes_lost", 0, ""});
    s.default_slos = true;
  }
  return s;
}

Scenario ParseScenarioFile(const std::string& path) {
  const std::string dir = fs::path(path).parent_path().string();
  return ParseScenarioText(emulator::ReadInputFile(path), path, dir.empty() ? "." : dir);
}

std::string LabLookupNote(const Scenario& s, bool from_scenario) {
  if (!from_scenario || s.lab_file_looked_for.empty()) return "";
  return "; no " + s.lab_file_looked_for + " (a lab name is looked up in labs/ beside the scenario's folder)";
}

std::vector<std::string> JobHosts(const Scenario& s, const std::vector<std::string>& lab_hosts,
                                  const TransportSpec* transport) {
  const bool own = transport && !transport->hosts.empty();
  const std::vector<std::string>& listed = own ? transport->hosts : s.job.hosts;
  const std::string base = own ? transport->field + ".hosts" : "job.hosts";
  std::vector<std::string> out;
  if (!listed.empty()) {
    const std::set<std::string> known(lab_hosts.begin(), lab_hosts.end());
    std::set<std::string> seen;
    for (size_t i = 0; i < listed.size(); ++i) {
      const std::string field = base + "[" + std::to_string(i) + "]";
      const std::string& h = listed[i];
      if (!known.count(h))
        throw ScenarioError(s.file, field, "unknown host '" + h + "' (the lab's hosts: " +
                                               (lab_hosts.empty() ? "none" : lab_hosts.front() + " .. " + lab_hosts.back()) + ")");
      if (!seen.insert(h).second) throw ScenarioError(s.file, field, "host '" + h + "' is listed twice");
    }
    out = listed;
  } else if (s.job.host_count == 0) {
    out = lab_hosts;
  } else {
    const size_t n = static_cast<size_t>(s.job.host_count), total = lab_hosts.size();
    if (n > total)
      throw ScenarioError(s.file, "job.hosts",
                          std::to_string(n) + " hosts asked for, the lab has " + std::to_string(total));
    for (size_t i = 0; i < n; ++i) out.push_back(lab_hosts[i * total / n]);
  }
  if (out.size() * static_cast<size_t>(s.job.ranks_per_host) < 2)
    throw ScenarioError(s.file, base, "a job needs at least 2 ranks: give 2 or more hosts, or ranks_per_host: 2");
  return out;
}

std::vector<std::string> JobHosts(const Scenario& s, const emulator::ResolvedLab& lab, const TransportSpec* transport) {
  std::vector<std::string> lab_hosts;
  for (const emulator::ResolvedNode* h : lab.Hosts()) lab_hosts.push_back(h->name);
  return JobHosts(s, lab_hosts, transport);
}

}  // namespace mrclab::harness
