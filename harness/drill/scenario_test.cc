// Scenario parsing and fault planning: every error names the file, the field and the reason;
// targets and selectors resolve against a real lab plan (no kernel needed).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "emulator/clos_generator.h"
#include "emulator/lab_spec.h"
#include "harness/drill/fault_plan.h"
#include "harness/drill/quantities.h"
#include "harness/drill/scenario.h"

namespace mrclab::harness {
namespace {

const char* kBase = R"(
name: t
lab: some-lab
job:
  collectives: [{kind: all_reduce, size: 1MiB}]
)";

Scenario Parse(const std::string& extra) { return ParseScenarioText(kBase + extra, "s.yaml", "."); }

std::string ErrorOf(const std::string& text) {
  try {
    ParseScenarioText(text, "s.yaml", ".");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

emulator::ResolvedLab Clos2() {
  return emulator::Resolve(emulator::ParseLabText(
      "name: x\nclos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 4, hosts: 8, hosts_per_leaf: 2}\n", "x.yaml"));
}

TEST(Quantities, ParseWithUnitsAndRefuseNonsense) {
  EXPECT_EQ(ParseBytes("1MiB"), 1048576u);
  EXPECT_EQ(ParseBytes("4096"), 4096u);
  EXPECT_EQ(ParseBytes("2KB"), 2000u);
  EXPECT_DOUBLE_EQ(ParseSeconds("50ms"), 0.05);
  EXPECT_DOUBLE_EQ(ParseSeconds("1.5m"), 90);
  EXPECT_DOUBLE_EQ(ParseFraction("2%"), 0.02);
  EXPECT_THROW(ParseBytes("1 parsec"), std::invalid_argument);
  EXPECT_THROW(ParseSeconds("-1s"), std::invalid_argument);
  EXPECT_THROW(ParseFraction("150%"), std::invalid_argument);
  EXPECT_DOUBLE_EQ(ParseBound("3.0"), 3.0);
  EXPECT_DOUBLE_EQ(ParseBound("0"), 0.0);
  for (const char* bad : {"-1", "nan", "inf", "1e400", "0x10", "3 s", ""})
    EXPECT_THROW(ParseBound(bad), std::invalid_argument) << bad;
  EXPECT_THROW(ParseSeconds("0x10ms"), std::invalid_argument);
  EXPECT_EQ(FormatBytes(1048576), "1MiB");
}

TEST(Scenario, DefaultsAndShorthands) {
  Scenario s = Parse("transports: [mrc, rc]\n");
  ASSERT_EQ(s.transports.size(), 2u);
  EXPECT_EQ(s.transports[1].transport, mrc::TransportMode::kRc);
  EXPECT_EQ(s.job.baseline_steps, 10);
  EXPECT_EQ(s.job.collectives[0].bytes, 1048576u);
  EXPECT_EQ(s.lab, "some-lab");  // not a file: a deployed lab's name
  EXPECT_FALSE(s.job.mtu.has_value());  // the lab's links decide (JobMtu)
  // No slos: did every MRC transport ride through, and was every byte delivered?
  ASSERT_TRUE(s.default_slos);
  ASSERT_EQ(s.slos.size(), 2u);
  EXPECT_EQ(s.slos[0].slo, "no_interruption");
  EXPECT_EQ(s.slos[0].transport, "mrc");
  EXPECT_EQ(s.slos[1].slo, "bytes_lost");
  EXPECT_EQ(s.slos[1].transport, "");
  EXPECT_FALSE(Parse("transports: [mrc]\nslos: [{slo: bytes_lost, max: 0}]\n").default_slos);
  // Keys are drawn per run unless the job asks to replay them.
  EXPECT_FALSE(s.job.key_seed.has_value());
  const Scenario keyed = ParseScenarioText(std::string(kBase) + "  key_seed: 42\ntransports: [mrc]\n", "s.yaml", ".");
  EXPECT_EQ(keyed.job.key_seed, 42u);
}

TEST(Scenario, RcTimersAreRcOnlyAndBounded) {
  const Scenario s = Parse("transports: [{name: rc, transport: rc, ev_mode: udp, ack_timeout: 500ms, retry_count: 3}]\n");
  EXPECT_DOUBLE_EQ(*s.transports[0].ack_timeout_seconds, 0.5);
  EXPECT_EQ(*s.transports[0].retry_count, 3);
  EXPECT_FALSE(Parse("transports: [rc]\n").transports[0].ack_timeout_seconds.has_value());  // the preset's 8 ms
  EXPECT_EQ(ErrorOf(std::string(kBase) + "transports: [{transport: mrc, retry_count: 3}]\n"),
            "s.yaml: transports[0].retry_count: RC only (MRC's retransmit timer follows the round-trip time)");
  EXPECT_EQ(ErrorOf(std::string(kBase) + "transports: [{transport: rc, ack_timeout: 100us}]\n"),
            "s.yaml: transports[0].ack_timeout: must be 1ms..60s");
}

TEST(Scenario, ErrorsNameFileFieldAndReason) {
  EXPECT_EQ(ErrorOf(std::string(kBase) + "bogus: 1\n").rfind("s.yaml: bogus: unknown key", 0), 0u) << ErrorOf(std::string(kBase) + "bogus: 1\n");
  EXPECT_NE(ErrorOf("name: t\nlab: x\n").find("s.yaml: job: required"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kBase) + "faults: [{at: 1s, kind: meteor, target: x}]\n")
                .find("faults[0].kind: unknown fault kind 'meteor'"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kBase) + "faults: [{at: 1s, kind: loss, target: x}]\n")
                .find("faults[0].rate: required"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kBase) + "faults: [{at: 1s, kind: link_down, target: x, count: 3}]\n")
                .find("faults[0].count: does not apply to link_down"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kBase) + "faults: [{at: soon, kind: link_down, target: x}]\n")
                .find("faults[0].at: 'soon' is not a number"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kBase) + "slos: [{slo: step_time_p99_ratio}]\n").find("slos[0].max: required"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kBase) + "slos: [{slo: no_interruption, transport: rc}]\n")
                .find("slos[0].transport: no transport named 'rc'"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kBase) + "slos: []\n").find("s.yaml: slos: an empty list judges nothing"),
            std::string::npos);
  EXPECT_NE(ErrorOf("name: [\n").find("s.yaml: line"), std::string::npos);
  // A lab file given as a scenario says what it is and what to do with it.
  EXPECT_EQ(ErrorOf("name: t\nclos: {planes: 1}\n"),
            "s.yaml: clos: this is a lab file, not a scenario: deploy it with `mrclab deploy s.yaml`, or name it in "
            "a scenario's lab: key");
  // One strict reader: a second list of faults or a second document is an error, not ignored.
  EXPECT_EQ(ErrorOf(std::string(kBase) + "faults: []\nfaults: [{at: 1s, kind: link_down, target: x}]\n")
                .rfind("s.yaml: faults: duplicate key", 0), 0u);
  EXPECT_EQ(ErrorOf(std::string(kBase) + "---\nname: u\n").rfind("s.yaml: (document): holds more than one YAML document", 0), 0u);
  // Times a drill could never reach are refused, not run as a PASS that tested nothing.
  EXPECT_EQ(ErrorOf(std::string(kBase) + "max_duration: 0s\n").rfind("s.yaml: max_duration: must be longer than 0 s", 0), 0u);
  EXPECT_NE(ErrorOf(std::string(kBase) + "faults: [{at: 1e308m, kind: link_down, target: x}]\n")
                .find("faults[0].at: '1e308m' is longer than a day"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kBase) + "max_duration: 10s\nfaults: [{at: 20s, kind: link_down, target: x}]\n")
                .find("faults[0].at: at 20 s is not before max_duration (10 s)"), std::string::npos);
  EXPECT_NE(ErrorOf("name: t\nlab: x\njob: {ranks_per_host: abc, collectives: [{kind: all_reduce}]}\n")
                .find("s.yaml: job.ranks_per_host: 'abc' is not a whole number"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kBase) + "transports: [{transport: tcp}]\n").find("transports[0].transport"),
            std::string::npos);
}

TEST(Scenario, TheKernelsRcIsRcWithoutEvsOrControllerFaults) {
  const Scenario s = Parse("transports: [{transport: rc, stack: kernel, hosts: [v0, v1], retry_count: 6}]\n");
  EXPECT_EQ(s.transports[0].stack, TransportStack::kKernel);
  EXPECT_EQ(s.transports[0].name, "rc_kernel");
  EXPECT_EQ(s.transports[0].hosts, (std::vector<std::string>{"v0", "v1"}));
  EXPECT_EQ(Parse("transports: [rc]\n").transports[0].stack, TransportStack::kModel);
  EXPECT_EQ(ErrorOf(std::string(kBase) + "transports: [{transport: mrc, stack: kernel}]\n"),
            "s.yaml: transports[0].stack: kernel: the kernel's RDMA stack runs RC only (transport: rc)");
  EXPECT_EQ(ErrorOf(std::string(kBase) + "transports: [{transport: rc, stack: kernel, evs: 4}]\n"),
            "s.yaml: transports[0].evs: the kernel's RC has no EVs (one path per QP, its UDP source port)");
  EXPECT_EQ(ErrorOf(std::string(kBase) + "transports: [{transport: rc, stack: linux}]\n"),
            "s.yaml: transports[0].stack: expected model or kernel");
  EXPECT_EQ(ErrorOf(std::string(kBase) + "transports: [{transport: rc, hosts: []}]\n"),
            "s.yaml: transports[0].hosts: an empty list: omit it to run on job.hosts");
  EXPECT_EQ(ErrorOf(std::string(kBase) + "transports: [mrc, {transport: rc, stack: kernel}]\n"
                                         "faults: [{at: 1, kind: port_disable, target: {host: h0, plane: 0}}]\n"),
            "s.yaml: faults[0].kind: port_disable acts on our core's QPs; transport 'rc_kernel' is the kernel's RC "
            "(stack: kernel), which it cannot reach");
}

TEST(Scenario, JobHostsAllListedOrSpreadEvenly) {
  const std::vector<std::string> lab = {"h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"};
  auto hosts_of = [&](const std::string& hosts) {
    return JobHosts(ParseScenarioText("name: t\nlab: x\njob:\n  hosts: " + hosts +
                                          "\n  collectives: [{kind: all_reduce, size: 1MiB}]\n",
                                      "s.yaml", "."),
                    lab);
  };
  EXPECT_EQ(hosts_of("all"), lab);
  EXPECT_EQ(hosts_of("[h3, h1]"), (std::vector<std::string>{"h3", "h1"}));
  EXPECT_EQ(hosts_of("4"), (std::vector<std::string>{"h0", "h2", "h4", "h6"}));
  EXPECT_EQ(hosts_of("3"), (std::vector<std::string>{"h0", "h2", "h5"}));
  try {
    hosts_of("9");
    FAIL() << "9 of 8 hosts accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("s.yaml: job.hosts: 9 hosts asked for, the lab has 8"), std::string::npos)
        << e.what();
  }
  EXPECT_NE(ErrorOf("name: t\nlab: x\njob:\n  hosts: 1\n  collectives: [{kind: all_reduce}]\n").find("job.hosts"),
            std::string::npos);
  // Caught by --check (which resolves the hosts), with the list entry named.
  auto error_of = [&](const std::string& hosts) -> std::string {
    try {
      hosts_of(hosts);
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of("[h0, h9]").rfind("s.yaml: job.hosts[1]: unknown host 'h9' (the lab's hosts: h0 .. h7)", 0), 0u);
  EXPECT_EQ(error_of("[h0, h1, h0]"), "s.yaml: job.hosts[2]: host 'h0' is listed twice");
  EXPECT_EQ(error_of("[h4]").rfind("s.yaml: job.hosts: a job needs at least 2 ranks", 0), 0u);
  // A transport's own hosts replace the job's, and errors name its field.
  const Scenario own = ParseScenarioText(
      "name: t\nlab: x\njob: {hosts: [h0, h1], collectives: [{kind: all_reduce}]}\n"
      "transports: [mrc, {transport: rc, stack: kernel, hosts: [h2, h9]}]\n", "s.yaml", ".");
  EXPECT_EQ(JobHosts(own, lab, &own.transports[0]), (std::vector<std::string>{"h0", "h1"}));
  try {
    JobHosts(own, lab, &own.transports[1]);
    FAIL() << "h9 accepted";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("s.yaml: transports[1].hosts[1]: unknown host 'h9'", 0), 0u) << e.what();
  }
  EXPECT_EQ(ErrorOf("name: a/../b\nlab: x\njob: {collectives: [{kind: all_reduce}]}\n").rfind("s.yaml: name: 'a/../b' must be", 0),
            0u);
}

TEST(FaultPlan, NamedTargetsAndFlapWindows) {
  Scenario s = Parse(
      "faults:\n"
      "  - {at: 1s, kind: flap, target: p0-leaf0:spine0, count: 3, down: 200ms, up: 800ms}\n"
      "  - {at: 2s, kind: switch_down, target: p1-spine1, duration: 4s}\n"
      "  - {at: 3s, kind: plane_down, target: '1'}\n");
  FaultPlan plan = PlanFaults(s, Clos2());
  ASSERT_EQ(plan.faults.size(), 3u);
  ASSERT_EQ(plan.faults[0].windows.size(), 3u);
  EXPECT_DOUBLE_EQ(plan.faults[0].windows[1].apply, 2.0);
  EXPECT_DOUBLE_EQ(plan.faults[0].windows[1].revert, 2.2);
  EXPECT_EQ(plan.faults[0].actions[0].kind, emulator::FaultKind::kLinkDown);
  EXPECT_EQ(plan.faults[1].actions[0].node, "p1-spine1");
  EXPECT_EQ(plan.faults[2].windows[0].revert, kUntilEnd);
  EXPECT_DOUBLE_EQ(plan.end_seconds, 6.0);
}

TEST(FaultPlan, JsonWindowsAreWholeNanoseconds) {
  // 0.005 + 0.03 is 0.034999999999999996 in binary floating point; result.json says 0.035.
  Scenario s = Parse("faults:\n  - {at: 5ms, kind: switch_down, target: p1-spine1, duration: 30ms}\n");
  const nlohmann::json windows = PlanFaults(s, Clos2()).ToJson()[0]["windows"];
  EXPECT_EQ(windows.dump(), R"([{"apply":0.005,"revert":0.035}])");
}

TEST(FaultPlan, SelectorsAreSeededAndRespectPlaneAndCount) {
  Scenario s = Parse("seed: 4\nfaults:\n  - {at: 1s, kind: blackhole, target: {select: leaf_spine_link, plane: 1, count: 2}}\n");
  const auto lab = Clos2();
  FaultPlan a = PlanFaults(s, lab), b = PlanFaults(s, lab);
  ASSERT_EQ(a.faults[0].actions.size(), 2u);
  EXPECT_EQ(a.faults[0].actions[0].link, b.faults[0].actions[0].link);
  EXPECT_NE(a.faults[0].actions[0].link, a.faults[0].actions[1].link);
  for (const auto& act : a.faults[0].actions) {
    EXPECT_EQ(lab.links[act.link].plane, 1);
    EXPECT_TRUE(lab.links[act.link].fabric);
  }
}

TEST(FaultPlan, APlaneSelectorKeepsToItsPlane) {
  for (const char* target : {"{plane: 1}", "{select: plane, plane: 1}"}) {
    for (int seed = 0; seed < 8; ++seed) {
      Scenario s = Parse("seed: " + std::to_string(seed) + "\nfaults:\n  - {at: 1s, kind: plane_down, target: " + target +
                         "}\n");
      FaultPlan plan = PlanFaults(s, Clos2());
      ASSERT_EQ(plan.faults[0].actions.size(), 1u) << target;
      EXPECT_EQ(plan.faults[0].actions[0].plane, 1) << target << " seed " << seed;
    }
  }
  Scenario both = Parse("faults:\n  - {at: 1s, kind: plane_down, target: {select: plane, count: 2}}\n");
  EXPECT_EQ(PlanFaults(both, Clos2()).faults[0].actions.size(), 2u);
}

TEST(FaultPlan, BadTargetsNameTheField) {
  auto error = [](const std::string& fault) {
    try {
      PlanFaults(Parse("faults:\n  - " + fault + "\n"), Clos2());
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("{at: 1s, kind: link_down, target: p9-leaf0:spine0}").find("faults[0].target"), std::string::npos);
  EXPECT_NE(error("{at: 1s, kind: switch_down, target: host0}").find("is a host"), std::string::npos);
  EXPECT_NE(error("{at: 1s, kind: plane_down, target: '7'}").find("not a plane"), std::string::npos);
  EXPECT_NE(error("{at: 1s, kind: link_down, target: {select: spine}}").find("target.select"), std::string::npos);
  EXPECT_NE(error("{at: 1s, kind: link_down, target: {plane: 1}}").find("target.select: a link fault selects "
                                                                         "leaf_spine_link or host_link, not nothing"),
            std::string::npos);
  EXPECT_NE(error("{at: 1s, kind: plane_down, target: {plane: 2}}").find("target.plane: plane 2 is not a plane"),
            std::string::npos);
  EXPECT_NE(error("{at: 1s, kind: plane_down, target: {select: spine}}").find("or name one"), std::string::npos);
  EXPECT_NE(error("{at: 1s, kind: blackhole, target: {select: leaf_spine_link, count: 99}}").find("only 16"),
            std::string::npos);
  EXPECT_NE(error("{at: 1s, kind: ev_deny, target: {from: host0, to: host77, evs: [1]}}").find("target.to"),
            std::string::npos);
}

TEST(FaultPlan, ControllerFaultsMustReachTheJobsQueuePairs) {
  // On 8 hosts, hosts: 4 is host0, host2, host4, host6.
  auto error = [](const std::string& fault, const std::string& job = "") {
    try {
      PlanFaults(ParseScenarioText("name: t\nlab: some-lab\njob: {hosts: 4, collectives: [{kind: all_reduce, size: "
                                   "1MiB}]" + job + "}\ntransports: [{name: m, transport: mrc, evs: 16}]\n"
                                   "faults:\n  - " + fault + "\n",
                                   "s.yaml", "."),
                 Clos2());
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("{at: 1s, kind: ev_deny, target: {from: host0, to: host2, evs: [0, 15]}}"), "no error");
  EXPECT_EQ(error("{at: 1s, kind: ev_deny, target: {from: host0, to: host2, evs: [16]}}"),
            "s.yaml: faults[0].target.evs: EV 16 is not one the job uses (its transports spray over EVs 0-15: "
            "transports[].evs)");
  EXPECT_EQ(error("{at: 1s, kind: ev_deny, target: {from: host0, to: host1, evs: [1]}}"),
            "s.yaml: faults[0].target.to: host1 is not one of the job's 4 hosts (job.hosts: host0, host2, host4, "
            "host6): the fault would touch no queue pair");
  EXPECT_NE(error("{at: 1s, kind: port_disable, target: {host: host3, plane: 0}}").find("faults[0].target.host: host3 "
                                                                                       "is not one of the job's"),
            std::string::npos);
  EXPECT_NE(error("{at: 1s, kind: ev_deny, target: {from: host2, to: host2, evs: [1]}}").find("target.to: the same "
                                                                                             "host as from"),
            std::string::npos);
  EXPECT_EQ(error("{at: 1s, kind: ev_deny, target: {from: host2, to: host2, evs: [1]}}", ", ranks_per_host: 2"),
            "no error");
}

}  // namespace
}  // namespace mrclab::harness
