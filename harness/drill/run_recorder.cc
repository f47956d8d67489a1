#include "harness/drill/run_recorder.h"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "emulator/errors.h"

namespace mrclab::harness {
namespace {

namespace fs = std::filesystem;

FILE* OpenAppend(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  return f;
}

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

void WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  fs::rename(tmp, path);
}

std::string HexOf(const unsigned char* bytes, unsigned int length) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < length; ++i) out += {hex[bytes[i] >> 4], hex[bytes[i] & 15]};
  return out;
}

}  // namespace

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  return HexOf(digest, length);
}

void CheckRunRoot(const std::string& out_root) {
  std::error_code ec;
  fs::path existing = fs::absolute(out_root, ec);
  while (!ec && !fs::exists(existing, ec) && existing.has_relative_path()) existing = existing.parent_path();
  if (ec)
    throw emulator::InputError("--out: cannot create run directories under " + existing.string() + ": " + ec.message());
  if (!fs::is_directory(existing))
    throw emulator::InputError("--out: " + existing.string() + " is not a directory (run directories go under --out)");
  if (access(existing.c_str(), W_OK | X_OK) != 0)
    throw emulator::InputError("--out: cannot create run directories under " + existing.string() + ": " +
                               std::strerror(errno));
}

RunRecorder::RunRecorder(const std::string& out_root, const std::string& scenario_name,
                         const std::string& scenario_text, std::function<double()> clock)
    : clock_(std::move(clock)) {
  fs::create_directories(out_root);
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", std::gmtime(&now));
  const std::string base = (fs::path(out_root) / (std::string(stamp) + "-" + scenario_name)).string();
  dir_ = base;
  for (int i = 2; mkdir(dir_.c_str(), 0755) != 0; ++i) {
    if (errno != EEXIST) throw std::runtime_error("cannot create " + dir_ + ": " + std::strerror(errno));
    dir_ = base + "-" + std::to_string(i);
  }
  std::ofstream(dir_ + "/scenario.yaml") << scenario_text;
  events_ = OpenAppend(dir_ + "/events.jsonl");
  steps_ = OpenAppend(dir_ + "/steps.csv");
  evs_ = OpenAppend(dir_ + "/evs.csv");
  std::fputs("t,transport,qp,ev,plane,state,tx_data,tx_retransmits,losses\n", evs_);
  links_ = OpenAppend(dir_ + "/links.csv");
  std::fputs("t,link,end,rx_packets,tx_packets,rx_dropped,tx_dropped,queue_peak_bytes\n", links_);
}

RunRecorder::~RunRecorder() {
  if (events_) std::fclose(events_);
  if (steps_) std::fclose(steps_);
  if (evs_) std::fclose(evs_);
  if (links_) std::fclose(links_);
}

void RunRecorder::EvSample(const std::string& transport, double t, const EvSnapshot& e) {
  std::lock_guard lock(mu_);
  std::fprintf(evs_, "%.3f,%s,%s,%u,%d,%s,%llu,%llu,%llu\n", t, transport.c_str(), e.qp.c_str(), e.ev, e.plane,
               e.state.c_str(), static_cast<unsigned long long>(e.tx_data),
               static_cast<unsigned long long>(e.tx_retransmits), static_cast<unsigned long long>(e.losses));
}

void RunRecorder::FlushEvs() {
  std::lock_guard lock(mu_);
  std::fflush(evs_);
}

void RunRecorder::LinkSamples(double t, const std::vector<LinkSample>& links) {
  std::lock_guard lock(mu_);
  auto row = [this](double at, const LinkSample& l, bool zero) {
    auto n = [zero](uint64_t v) { return static_cast<unsigned long long>(zero ? 0 : v); };
    std::fprintf(links_, "%.3f,%d,%s,%llu,%llu,%llu,%llu,", at, l.link, l.end.c_str(), n(l.rx_packets),
                 n(l.tx_packets), n(l.rx_dropped), n(l.tx_dropped));
    if (l.queue_peak_bytes) std::fprintf(links_, "%llu", n(*l.queue_peak_bytes));
    std::fputs("\n", links_);
  };
  for (const auto& l : links) {
    if (!listed_ends_.count(l.end)) {
      // An end that never counted a packet is left out (a big lab's are millions); from its
      // first one on it is listed, starting with a zero row at the sample before.
      if (!l.Counted()) continue;
      listed_ends_.insert(l.end);
      if (last_link_sample_) row(*last_link_sample_, l, true);
    }
    row(t, l, false);
  }
  last_link_sample_ = t;
  std::fflush(links_);
}

std::string RunRecorder::WriteLab(const emulator::ResolvedLab& lab, size_t max_listed) {
  if (lab.nodes.size() + lab.links.size() <= max_listed) {
    const nlohmann::json plan = lab.ToJson();
    WriteAtomically(dir_ + "/lab.json", plan.dump(1) + "\n");
    return Sha256Hex(plan.dump());
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> sha(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(sha.get(), EVP_sha256(), nullptr);
  lab.DumpJson([&sha](std::string_view piece) { EVP_DigestUpdate(sha.get(), piece.data(), piece.size()); });
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(sha.get(), digest, &length);
  nlohmann::json summary = lab.SummaryJson();
  size_t fabric_links = 0;
  for (const auto& l : lab.links) fabric_links += l.fabric;
  summary["not_listed"] = {{"nodes", lab.nodes.size()},
                           {"links", lab.links.size()},
                           {"fabric_links", fabric_links},
                           {"why", "more than " + std::to_string(max_listed) + " nodes and links; the lab file resolves to them"}};
  WriteAtomically(dir_ + "/lab.json", summary.dump(1) + "\n");
  return HexOf(digest, length);
}

void RunRecorder::Event(nlohmann::json event) {
  if (!event.contains("t")) event["t"] = clock_();
  const std::string line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mu_);
  std::fputs(line.c_str(), events_);
  std::fflush(events_);
}

void RunRecorder::Step(const std::string& transport, const RecordedStep& s) {
  const StepRecord& r = s.record;
  std::lock_guard lock(mu_);
  if (!steps_header_) {
    std::fputs("transport,step,phase,faults_active,start,end,seconds,bytes_verified,bytes_bad,retransmissions", steps_);
    for (size_t c = 0; c < r.collectives.size(); ++c)
      std::fprintf(steps_, ",c%zu_kind,c%zu_seconds,c%zu_busbw_gbps", c, c, c);
    std::fputs("\n", steps_);
    steps_header_ = true;
  }
  std::fprintf(steps_, "%s,%llu,%s,%d,%.6f,%.6f,%.6f,%llu,%llu,%llu", transport.c_str(),
               static_cast<unsigned long long>(r.step), std::string(ToString(s.phase)).c_str(), s.faults_active,
               r.start, r.end, r.seconds, static_cast<unsigned long long>(r.bytes_verified),
               static_cast<unsigned long long>(r.bytes_bad), static_cast<unsigned long long>(r.retransmissions));
  for (const auto& c : r.collectives)
    std::fprintf(steps_, ",%s,%.6f,%.4f", std::string(ToString(c.kind)).c_str(), c.seconds, c.busbw_gbps);
  std::fputs("\n", steps_);
  std::fflush(steps_);
}

void RunRecorder::WriteResult(const nlohmann::json& result) {
  WriteAtomically(dir_ + "/result.json", result.dump(2) + "\n");
}

void RunRecorder::WriteJunit(const std::string& scenario, const std::vector<SloResult>& slos,
                             const FidelityReport& fidelity, const std::vector<std::string>& not_tested,
                             double seconds) {
  int failures = 0;
  for (const auto& s : slos) failures += !s.pass;
  const std::string suite = "drill." + XmlEscape(scenario);
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  const int errors = (fidelity.ok() ? 0 : 1) + (not_tested.empty() ? 0 : 1);
  xml += "<testsuites>\n<testsuite name=\"" + suite + "\" tests=\"" + std::to_string(slos.size() + 2) +
         "\" failures=\"" + std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
         "\" time=\"" + std::to_string(seconds) + "\">\n";
  for (const auto& s : slos) {
    xml += "  <testcase classname=\"" + suite + "." + XmlEscape(s.transport) + "\" name=\"" + XmlEscape(s.slo) + "\">";
    const std::string text = "value " + std::to_string(s.value) + ", max " + std::to_string(s.max) +
                             (s.detail.empty() ? "" : ": " + s.detail);
    if (s.pass)
      xml += "<system-out>" + XmlEscape(text) + "</system-out>";
    else
      xml += "<failure message=\"" + XmlEscape(text) + "\"/>";
    xml += "</testcase>\n";
  }
  // The emulator's own health: an error (not a failure) when the machine was the bottleneck,
  // since the SLO results above then say nothing about the fabric.
  xml += "  <testcase classname=\"" + suite + "\" name=\"emulation_fidelity\">";
  if (fidelity.ok()) {
    xml += "<system-out>" + std::string(fidelity.measured ? "ok" : "not measured (simulated time)") + "</system-out>";
  } else {
    std::string reasons;
    for (const auto& r : fidelity.reasons) reasons += (reasons.empty() ? "" : "; ") + r;
    xml += "<error type=\"inconclusive\" message=\"" + XmlEscape(reasons) + "\"/>";
  }
  xml += "</testcase>\n";
  // The schedule: were all the planned faults applied?
  xml += "  <testcase classname=\"" + suite + "\" name=\"fault_schedule\">";
  if (not_tested.empty()) {
    xml += "<system-out>every planned fault was applied</system-out>";
  } else {
    std::string lines;
    for (const auto& l : not_tested) lines += (lines.empty() ? "" : "; ") + l;
    xml += "<error type=\"not_tested\" message=\"" + XmlEscape(lines) + "\"/>";
  }
  xml += "</testcase>\n</testsuite>\n</testsuites>\n";
  WriteAtomically(dir_ + "/junit.xml", xml);
}

void RunRecorder::WriteFidelity(const std::vector<FidelitySample>& samples) {
  std::string csv = "t,cpu_busy,steal,run_wait,timer_late_p99_ms,timer_late_max_ms,saturated\n";
  char line[160];
  for (const auto& s : samples) {
    const Saturation cause = Classify(s);
    std::snprintf(line, sizeof(line), "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%s\n", s.t, s.cpu_busy, s.steal, s.run_wait,
                  s.late_p99_ms, s.late_max_ms,
                  cause == Saturation::kNone ? "" : cause == Saturation::kBusy ? "busy"
                                                 : cause == Saturation::kSteal ? "steal" : "late");
    csv += line;
  }
  WriteAtomically(dir_ + "/fidelity.csv", csv);
}

void RunRecorder::CopyFrrLogs(const std::string& lab_state_dir) {
  const fs::path nodes = fs::path(lab_state_dir) / "nodes";
  if (!fs::exists(nodes)) return;
  for (const auto& node : fs::directory_iterator(nodes)) {
    if (!node.is_directory()) continue;
    for (const auto& file : fs::directory_iterator(node.path())) {
      const std::string ext = file.path().extension().string();
      if (ext != ".log" && ext != ".out") continue;
      const fs::path dest = fs::path(dir_) / "frr-logs" / node.path().filename();
      fs::create_directories(dest);
      std::error_code ec;
      fs::copy_file(file.path(), dest / file.path().filename(), fs::copy_options::overwrite_existing, ec);
    }
  }
}

}  // namespace mrclab::harness
