// _mrclab: the C++ core of the Python module `mrclab` (pybind11). Thin: labs (deploy, destroy,
// plans), the fault injector, the training job and drills, exchanging plain dicts (JSON) with
// the Python layer in mrclab/, which adds the objects, context managers and docstrings.
//
// Long calls release the GIL and run with mrclab's own Ctrl-C handlers installed, so that the
// C++ code stops at a safe point and cleans up (rolls back a deploy, reverts a drill's faults);
// the interruption then reaches Python as KeyboardInterrupt.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <pthread.h>

#include <chrono>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "emulator/lab_spec.h"
#include "emulator/strict_yaml.h"
#include "emulator/netns/deploy.h"
#include "emulator/netns/faults.h"
#include "emulator/netns/interrupt.h"
#include "emulator/netns/lab_state.h"
#include "emulator/resolved_lab.h"
#include "harness/drill/drill_runner.h"
#include "harness/drill/quantities.h"
#include "harness/drill/scenario.h"
#include "harness/job/realtime_job.h"
#include "harness/telemetry/metrics_exporter.h"

namespace py = pybind11;
namespace nx = mrclab::emulator::netns;
using nlohmann::json;

namespace mrclab::python {
namespace {

// JSON <-> Python through the json module: simple and exact for the small documents exchanged.
py::object ToPy(const json& j) { return py::module_::import("json").attr("loads")(j.dump()); }
json FromPy(const py::handle& o) { return json::parse(py::module_::import("json").attr("dumps")(o).cast<std::string>()); }

pthread_t g_main_thread;  // the thread that imported the module

// Runs fn without the GIL. On the main thread, mrclab's Ctrl-C handlers are installed meanwhile
// (other threads leave signal handling alone).
template <typename F>
auto Interruptible(F&& fn) {
  std::optional<nx::ScopedInterruptHandlers> handlers;
  if (pthread_equal(pthread_self(), g_main_thread)) {
    nx::ClearInterrupt();
    handlers.emplace();
  }
  py::gil_scoped_release release;
  return fn();
}

emulator::ResolvedLab PlanFromText(const std::string& text, const std::string& source) {
  return emulator::Resolve(emulator::ParseLabText(text, source));
}

harness::JobConfig JobConfigFrom(const emulator::ResolvedLab& lab, const json& c) {
  harness::JobConfig jc;
  jc.label = c.value("label", "mrc");
  jc.hosts = c.value("hosts", std::vector<std::string>{});
  if (jc.hosts.empty())
    for (const auto* h : lab.Hosts()) jc.hosts.push_back(h->name);
  jc.ranks_per_host = c.value("ranks_per_host", 1);
  const std::string transport = c.value("transport", "mrc");
  if (transport != "mrc" && transport != "rc") throw std::invalid_argument("transport must be 'mrc' or 'rc'");
  jc.transport = transport == "rc" ? mrc::TransportMode::kRc : mrc::TransportMode::kMrc;
  const std::string stack = c.value("stack", "model");
  if (stack != "model" && stack != "kernel") throw std::invalid_argument("stack must be 'model' or 'kernel'");
  jc.stack = stack == "kernel" ? harness::TransportStack::kKernel : harness::TransportStack::kModel;
  const auto mode = mrc::ParseEvMode(c.value("ev_mode", "srv6"));
  if (!mode) throw std::invalid_argument("ev_mode must be 'srv6' or 'udp'");
  jc.ev_mode = *mode;
  jc.evs_per_qp = c.value("evs", 32);
  jc.qps_per_peer = c.value("qps_per_peer", 1);
  if (c.contains("min_active")) jc.min_active = c.at("min_active").get<int>();
  if (c.contains("ack_timeout")) jc.rc_ack_timeout = mrc::Duration::Seconds(c.at("ack_timeout").get<double>());
  if (c.contains("retry_count")) jc.rc_retry_count = c.at("retry_count").get<uint32_t>();
  jc.collectives.clear();
  for (const auto& item : c.value("collectives", json::array({json::array({"all_reduce", "1MiB"})}))) {
    auto kind = harness::ParseCollectiveKind(item.at(0).get<std::string>());
    if (!kind) throw std::invalid_argument("unknown collective '" + item.at(0).get<std::string>() + "'");
    const json& size = item.at(1);
    jc.collectives.push_back({*kind, size.is_string() ? harness::ParseBytes(size.get<std::string>()) : size.get<uint64_t>()});
  }
  jc.compute_seconds = c.value("compute_seconds", harness::kDefaultComputeSeconds);
  jc.step_timeout_seconds = c.value("step_timeout_seconds", harness::kDefaultStepTimeoutSeconds);
  jc.mtu = c.value("mtu", 1024);
  const std::string payload = c.value("payload", "real");
  if (payload != "real" && payload != "virtual")
    throw std::invalid_argument("job.payload: expected real or virtual, got '" + payload + "'");
  jc.payload = payload == "virtual" ? harness::PayloadMode::kVirtual : harness::PayloadMode::kReal;
  jc.seed = c.value("seed", 1);
  if (c.contains("key_seed")) jc.key_seed = c.at("key_seed").get<uint64_t>();
  jc.io_threads = c.value("io_threads", 2);
  jc.max_steps = c.value("steps", 0);
  return jc;
}

json StepJson(const harness::StepRecord& r) {
  json colls = json::array();
  for (const auto& c : r.collectives)
    colls.push_back({{"kind", harness::ToString(c.kind)}, {"bytes", c.bytes}, {"seconds", c.seconds},
                     {"busbw_gbps", c.busbw_gbps}});
  return {{"step", r.step}, {"start", r.start}, {"end", r.end}, {"seconds", r.seconds}, {"collectives", colls},
          {"bytes_verified", r.bytes_verified}, {"bytes_lost", r.bytes_bad}, {"retransmissions", r.retransmissions}};
}

// A training job plus what it reported, kept for Python to read at any time.
class PyJob {
 public:
  PyJob(const std::string& lab_name, const py::dict& config) : lab_(nx::LoadDeployedLab(lab_name)) {
    const harness::JobConfig jc = JobConfigFrom(lab_, FromPy(config));
    auto on_event = [this](const json& e) {
      std::lock_guard lock(mu_);
      events_.push_back(e);
    };
    auto on_step = [this](const harness::StepRecord& r) {
      std::lock_guard lock(mu_);
      steps_.push_back(StepJson(r));
    };
    job_ = harness::MakeRealtimeJob(lab_, jc, on_event, on_step);
  }
  void Start() {
    py::gil_scoped_release release;  // the kernel's RC connects its QPs first (seconds on VM hosts)
    job_->Start();
  }
  // Waits in slices with the GIL released, checking for Ctrl-C between them.
  bool WaitForSteps(uint64_t n, double timeout) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
    for (;;) {
      bool done;
      {
        py::gil_scoped_release release;
        done = job_->WaitForSteps(n, 0.1);
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (done) return true;
      if (job_->state() != harness::JobState::kRunning || std::chrono::steady_clock::now() >= deadline) return false;
    }
  }
  py::object Wait() {
    while (job_->state() == harness::JobState::kRunning) {
      {
        py::gil_scoped_release release;
        job_->WaitForSteps(UINT64_MAX, 0.1);
      }
      if (PyErr_CheckSignals() != 0) {
        job_->RequestStop();
        throw py::error_already_set();
      }
    }
    harness::JobResult r;
    {
      py::gil_scoped_release release;
      r = job_->Wait();
    }
    return ToPy({{"state", harness::ToString(r.state)}, {"reason", r.reason}, {"steps", r.steps},
                 {"bytes_verified", r.bytes_verified}, {"bytes_lost", r.bytes_bad},
                 {"retransmissions", r.retransmissions}, {"seconds", r.seconds}});
  }
  void RequestStop() { job_->RequestStop(); }
  std::string State() const { return std::string(harness::ToString(job_->state())); }
  py::object Steps() {
    std::lock_guard lock(mu_);
    return ToPy(steps_);
  }
  py::object Events() {
    std::lock_guard lock(mu_);
    return ToPy(events_);
  }
  int SetEvDenied(const std::string& a, const std::string& b, int ev, bool denied) {
    const harness::EvControlResult done = job_->SetEvDenied(a, b, ev, denied);
    return done.qps - done.refused;
  }
  int SetPortEnabled(const std::string& host, int plane, bool enabled) {
    return job_->SetPortEnabled(host, plane, enabled);
  }
  py::object Evs() {
    std::vector<harness::EvSnapshot> evs;
    {
      py::gil_scoped_release release;
      evs = job_->SnapshotEvs();
    }
    json out = json::array();
    for (const auto& e : evs)
      out.push_back({{"qp", e.qp}, {"ev", e.ev}, {"plane", e.plane}, {"state", e.state}, {"tx_data", e.tx_data},
                     {"tx_retransmits", e.tx_retransmits}, {"losses", e.losses}});
    return ToPy(out);
  }
  int Ranks() const { return job_->ranks(); }
  void Close() {
    py::gil_scoped_release release;
    job_.reset();
  }

 private:
  emulator::ResolvedLab lab_;  // outlives job_
  std::unique_ptr<harness::Job> job_;
  std::mutex mu_;
  json steps_ = json::array(), events_ = json::array();
};

class PyFaults {
 public:
  explicit PyFaults(const std::string& lab_name) : lab_(nx::LoadDeployedLab(lab_name)), injector_(lab_) {}
  int Apply(const py::dict& action) {
    const auto a = emulator::FaultAction::FromJson(FromPy(action));
    return Interruptible([&] { return injector_.Apply(a); });
  }
  void Revert(int id) {
    Interruptible([&] {
      injector_.Revert(id);
      return 0;
    });
  }
  py::object Active() const {
    json out = json::array();
    for (const auto& f : injector_.Active())
      out.push_back({{"id", f.id}, {"action", f.action.ToJson()}, {"applied_at", f.applied_at},
                     {"description", f.action.Describe(lab_)}});
    return ToPy(out);
  }
  std::string Describe(const py::dict& action) const { return emulator::FaultAction::FromJson(FromPy(action)).Describe(lab_); }
  int LinkIndex(const std::string& target) const { return emulator::ResolveLinkTarget(lab_, target); }

 private:
  emulator::ResolvedLab lab_;
  nx::FaultInjector injector_;
};

}  // namespace
}  // namespace mrclab::python

PYBIND11_MODULE(_mrclab, m) {
  using namespace mrclab;
  using namespace mrclab::python;
  g_main_thread = pthread_self();
  m.doc() = "C++ core of the mrclab Python module; use `import mrclab` (see help(mrclab)).";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const nx::Interrupted&) {
      nx::ClearInterrupt();
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    } catch (const emulator::LabError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const emulator::FaultError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const emulator::Error& e) {  // bad input is a ValueError; a failed operation a RuntimeError
      PyErr_SetString(e.kind() == emulator::ErrorKind::kInput ? PyExc_ValueError : PyExc_RuntimeError, e.what());
    }
  });

  m.def("resolve", [](const std::string& text, const std::string& source) { return ToPy(PlanFromText(text, source).ToJson()); },
        py::arg("text"), py::arg("source"), "Resolved plan (dict) of a lab file's text; ValueError names file, field, reason.");
  m.def("read_input_file",
        [](const std::string& path) {
          std::string text = emulator::ReadInputFile(path);
          emulator::LoadStrictYaml(text, path);
          return text;
        },
        py::arg("path"),
        "Text of a lab or scenario file, read as every mrclab command reads one: a regular file of at most "
        "1 MiB holding one YAML document with no key given twice; ValueError names file, field, reason.");
  m.def("deployed_plan", [](const std::string& name) { return ToPy(nx::LoadDeployedLab(name).ToJson()); },
        py::arg("name"), "Plan of a deployed lab.");
  m.def("deployed_labs", [] { return nx::ListLabs(); }, "Names of the labs with state on this machine.");
  m.def("lab_state", [](const std::string& name) { return ToPy(nx::ReadLabJson(name)); }, py::arg("name"));
  m.def("deploy",
        [](const std::string& text, const std::string& source, int timeout_s, bool progress) {
          const auto plan = PlanFromText(text, source);
          nx::DeployOptions o;
          o.timeout = std::chrono::seconds(timeout_s);
          o.progress = progress;
          o.lab_text = text;
          return ToPy(Interruptible([&] { return nx::Deploy(plan, o); }).ToJson());
        },
        py::arg("text"), py::arg("source"), py::arg("timeout_s") = 120, py::arg("progress") = false,
        "Deploys and verifies a lab; rolls back on error or Ctrl-C. Returns the deploy report.");
  m.def("destroy",
        [](const std::string& name) {
          const auto r = Interruptible([&] { return nx::Destroy(name); });
          return ToPy({{"processes", r.processes}, {"killed", r.killed}, {"namespaces", r.namespaces},
                       {"seconds", r.seconds}, {"problems", r.problems}});
        },
        py::arg("name"), "Removes every trace of a lab (also after a crash).");
  m.def("revert_leftover_faults", [](const std::string& name) {
          const auto lab = nx::LoadDeployedLab(name);
          return Interruptible([&] { return nx::RevertLeftoverFaults(lab); });
        }, py::arg("name"), "Reverts every active fault of a lab, whoever applied it.");
  m.def("run_drill",
        [](const std::string& scenario, const py::dict& options) {
          const json o = FromPy(options);
          harness::DrillOptions d;
          d.out_root = o.value("out", "runs");
          d.lab = o.value("lab", "");
          d.metrics_bind = o.value("metrics", "");
          if (d.metrics_bind == "off") d.metrics_bind.clear();
          if (!d.metrics_bind.empty()) harness::CheckMetricsBind(d.metrics_bind, "metrics");
          d.keep_lab = o.value("keep_lab", false);
          d.progress = o.value("progress", false);
          d.summary = o.value("summary", false);
          d.transports = o.value("transports", std::vector<std::string>{});
          d.lab_option = "lab";
          d.transport_option = "transports";
          if (const std::string backend = o.value("backend", ""); !backend.empty()) {
            d.backend = emulator::ParseBackend(backend);
            if (!d.backend) throw std::invalid_argument("backend must be 'netns' or 'ns3', not '" + backend + "'");
          }
          const harness::Scenario s = harness::ParseScenarioFile(scenario);
          return ToPy(Interruptible([&] { return harness::RunDrill(s, d); }).result);
        },
        py::arg("scenario"), py::arg("options"), "Runs a drill; returns result.json as a dict.");

  py::class_<PyFaults>(m, "FaultInjector")
      .def(py::init<const std::string&>(), py::arg("lab"))
      .def("apply", &PyFaults::Apply, py::arg("action"))
      .def("revert", &PyFaults::Revert, py::arg("id"))
      .def("active", &PyFaults::Active)
      .def("describe", &PyFaults::Describe, py::arg("action"))
      .def("link_index", &PyFaults::LinkIndex, py::arg("target"));

  py::class_<PyJob>(m, "TrainingJob")
      .def(py::init<const std::string&, const py::dict&>(), py::arg("lab"), py::arg("config"))
      .def("start", &PyJob::Start)
      .def("wait_for_steps", &PyJob::WaitForSteps, py::arg("steps"), py::arg("timeout"))
      .def("wait", &PyJob::Wait)
      .def("request_stop", &PyJob::RequestStop)
      .def("state", &PyJob::State)
      .def("steps", &PyJob::Steps)
      .def("events", &PyJob::Events)
      .def("evs", &PyJob::Evs)
      .def("ranks", &PyJob::Ranks)
      .def("set_ev_denied", &PyJob::SetEvDenied)
      .def("set_port_enabled", &PyJob::SetPortEnabled)
      .def("close", &PyJob::Close);
}
