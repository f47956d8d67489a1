// Goodput benchmark over a real veth between two network namespaces it creates (mrct-<pid>-a/b,
// deleted on exit; needs root). In one run, on the same path:
//   raw UDP   a plain sender (sendmmsg, 32 per call) and receiver (recvmmsg), datagrams the
//             size of a full MRC data packet, no reliability: the reference of the targets;
//             and the same with UDP GSO/GRO, the ceiling of what offload can give
//   MRC       RunPerf single QP, Write-with-Immediate, bytes verified, with 1 EV (with and
//             without the driver's GSO/GRO), 8 and 64 EVs
//   RC        the baseline mode, for reference
// Prints goodput and CPU seconds per GB (whole process: both ends), then back-to-back pairs of
// the plain sender and MRC on 1 EV, whose median ratios are the figures the targets name.
//
//   usage: mrc_goodput_bench [--seconds S] [--mtu BYTES] [--payload BYTES] [--msg BYTES] [--rounds N]
//                            [--only LEG]   (one table leg, e.g. mrc/1-ev, for profiling; no pairs)
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mrc/asio/netns.h"
#include "mrc/asio/perf.h"
#include "mrc/asio/udp_offload.h"
#include "mrc/asio/veth_pair_testing.h"

using namespace mrclab::mrc;

namespace {

struct RawResult {
  double gbps = 0, cpu_per_gb = 0;
};

// A plain sender: sendmmsg of `batch` datagrams per call; with `gso`, each message carries as
// many datagrams as one UDP GSO super-packet holds, and the receiver takes them with UDP GRO.
RawResult RawUdp(const testing::VethNamespacePair& net, size_t datagram, size_t payload, double seconds,
                 bool gso = false) {
  UdpSocketOptions r;
  r.netns = net.ns_b();
  r.local_address = net.address_b(0);
  r.local_port = 4792;
  r.nonblocking = false;
  const int rfd = OpenUdpSocket(r);
  timeval tv{0, 100000};
  setsockopt(rfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (gso) EnableUdpGro(rfd);
  UdpSocketOptions s;
  s.netns = net.ns_a();
  s.local_address = net.address_a(0);
  s.connect_address = net.address_b(0);
  s.connect_port = 4792;
  s.nonblocking = false;
  s.zero_checksum = !gso;
  const int sfd = OpenUdpSocket(s);

  constexpr int kBatch = 32;
  constexpr size_t kSlot = 65536;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> received{0};
  const double cpu0 = ProcessCpuSeconds();
  std::thread receiver([&] {
    std::vector<uint8_t> buf(kBatch * kSlot);
    std::vector<mmsghdr> msgs(kBatch);
    std::vector<iovec> iov(kBatch);
    std::vector<unsigned char> control(kBatch * kUdpOffloadControlBytes);
    while (!stop.load()) {
      for (int i = 0; i < kBatch; ++i) {
        iov[i] = {buf.data() + i * kSlot, kSlot};
        msgs[i] = {};
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_control = control.data() + i * kUdpOffloadControlBytes;
        msgs[i].msg_hdr.msg_controllen = kUdpOffloadControlBytes;
      }
      const int n = recvmmsg(rfd, msgs.data(), kBatch, MSG_WAITFORONE, nullptr);
      for (int i = 0; i < n; ++i) {
        const size_t segment = GroSegmentSize(msgs[i].msg_hdr);
        received.fetch_add(segment ? (msgs[i].msg_len + segment - 1) / segment : 1);
      }
    }
  });
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  const size_t per_message = gso ? std::min(kMaxGsoSegments, kMaxGsoBytes / datagram) : 1;
  std::vector<uint8_t> data(datagram, 0x5A);
  std::vector<mmsghdr> msgs(kBatch);
  std::vector<iovec> iov(per_message, iovec{data.data(), data.size()});
  std::vector<unsigned char> control(kBatch * kUdpOffloadControlBytes);
  for (int i = 0; i < kBatch; ++i) {
    msgs[i].msg_hdr = {};
    msgs[i].msg_hdr.msg_iov = iov.data();
    msgs[i].msg_hdr.msg_iovlen = per_message;
    if (per_message > 1) SetGsoSegment(msgs[i].msg_hdr, control.data() + i * kUdpOffloadControlBytes, datagram);
  }
  while (std::chrono::steady_clock::now() < end) sendmmsg(sfd, msgs.data(), kBatch, 0);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  usleep(50000);  // drain: the receiver polls with a 100 ms timeout
  stop = true;
  receiver.join();
  const double cpu = ProcessCpuSeconds() - cpu0;
  close(rfd);
  close(sfd);
  const double bytes = static_cast<double>(received.load()) * payload;
  return {bytes * 8 / elapsed / 1e9, bytes > 0 ? cpu / (bytes / 1e9) : 0};
}

PerfResult Mrc(const testing::VethNamespacePair& net, TransportMode mode, int evs, uint32_t payload,
               uint64_t msg, double seconds, bool offload = true) {
  PerfConfig c;
  c.segmentation_offload = offload;
  c.transport = mode;
  c.server_ports.push_back({net.ns_b(), net.address_b(0), 0});
  c.client_ports.push_back({net.ns_a(), net.address_a(0), 0});
  for (int i = 0; i < evs; ++i) c.evs.push_back({0, net.address_b(0), static_cast<uint16_t>(49152 + i)});
  c.mtu = payload;
  c.message_bytes = msg;
  c.duration_seconds = seconds;
  c.max_outstanding_messages = 8;
  return RunPerf(c);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  int mtu = 9000;
  uint32_t payload = 8192;
  uint64_t msg = 1 << 20;
  int rounds = 3;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--mtu")) mtu = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--payload")) payload = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--msg")) msg = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--only")) only = argv[i + 1];
  }
  if (!testing::CanCreateNamespaces()) {
    std::fprintf(stderr, "needs root and iproute2\n");
    return 77;
  }
  testing::VethNamespacePair net("mrct-", 1, mtu);
  // A full MRC data packet: BTH 12 + MRCETH 4 + MDETH 8 + RETH 16 + payload + ICRC 4.
  const size_t datagram = 44 + payload;
  std::printf("veth mtu %d, %u-byte payload per packet (%zu-byte datagrams), %.1f s per run\n", mtu,
              payload, datagram, seconds);
  for (const bool gso : {false, true}) {
    const char* name = gso ? "raw-udp+gso/gro" : "raw-udp";
    if (!only.empty() && only != name) continue;
    const RawResult raw = RawUdp(net, datagram, payload, seconds, gso);
    std::printf("%-16s goodput %7.2f Gb/s  cpu %6.2f s/GB\n", name, raw.gbps, raw.cpu_per_gb);
  }
  bool ok = true;
  struct Leg {
    TransportMode mode;
    int evs;
    bool offload;
  };
  for (const Leg leg : {Leg{TransportMode::kMrc, 1, true}, Leg{TransportMode::kMrc, 1, false}, Leg{TransportMode::kMrc, 8, true},
                        Leg{TransportMode::kMrc, 64, true}, Leg{TransportMode::kRc, 8, true}}) {
    char name[40];
    std::snprintf(name, sizeof name, "%s/%d-ev%s", leg.mode == TransportMode::kMrc ? "mrc" : "rc", leg.evs,
                  leg.offload ? "" : " no-gso");
    if (!only.empty() && only != name) continue;
    const PerfResult r = Mrc(net, leg.mode, leg.evs, payload, msg, seconds, leg.offload);
    std::printf("%-16s goodput %7.2f Gb/s  cpu %6.2f s/GB  p50 %7.0f us  p99 %7.0f us  rtx %lu  rto %lu  srtt %.0f us  cwnd %lu KB  "
                "datagrams/send %.1f  acks/packet %.2f  verified %.2f GB%s%s\n",
                name, r.goodput_gbps, r.cpu_seconds_per_gb, r.latency_us_p50, r.latency_us_p99,
                static_cast<unsigned long>(r.retransmissions), static_cast<unsigned long>(r.rto_fired),
                r.srtt_us, static_cast<unsigned long>(r.congestion_window_bytes / 1024),
                r.client_io.tx_syscalls ? static_cast<double>(r.client_io.tx_datagrams) / r.client_io.tx_syscalls : 0,
                r.client_io.tx_datagrams ? static_cast<double>(r.server_io.tx_datagrams) / r.client_io.tx_datagrams : 0,
                r.bytes_verified / 1e9, r.ok ? "" : "  ERROR: ", r.error.c_str());
    ok = ok && r.ok;
  }
  // The machine is shared: ratios from back-to-back pairs (plain sender, then MRC at once) are
  // steadier than ones from runs seconds apart. The medians of the pairs are the figures to quote.
  std::vector<double> goodput_ratios, cpu_ratios;
  if (!only.empty()) rounds = 0;
  for (int round = 0; round < rounds; ++round) {
    const RawResult plain = RawUdp(net, datagram, payload, seconds);
    const PerfResult r = Mrc(net, TransportMode::kMrc, 1, payload, msg, seconds);
    ok = ok && r.ok;
    goodput_ratios.push_back(plain.gbps > 0 ? r.goodput_gbps / plain.gbps : 0);
    cpu_ratios.push_back(plain.cpu_per_gb > 0 ? r.cpu_seconds_per_gb / plain.cpu_per_gb : 0);
    std::printf("pair %d: plain %.2f Gb/s %.2f s/GB, mrc/1-ev %.2f Gb/s %.2f s/GB: goodput %.0f%%, cpu per GB %.0f%%\n",
                round + 1, plain.gbps, plain.cpu_per_gb, r.goodput_gbps, r.cpu_seconds_per_gb,
                100 * goodput_ratios.back(), 100 * cpu_ratios.back());
  }
  if (rounds > 0) {
    std::sort(goodput_ratios.begin(), goodput_ratios.end());
    std::sort(cpu_ratios.begin(), cpu_ratios.end());
    std::printf("mrc single-QP against the plain UDP sender, median of %d back-to-back pairs: goodput %.0f%% "
                "(target >= 90%%), cpu per GB %.0f%% (target <= 100%%)\n",
                rounds, 100 * goodput_ratios[goodput_ratios.size() / 2], 100 * cpu_ratios[cpu_ratios.size() / 2]);
  }
  return ok ? 0 : 1;
}
