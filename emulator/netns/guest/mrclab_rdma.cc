// mrclab-rdma: the kernel's RC transport between two VM hosts (libibverbs on rdma_rxe,
// connected with rdma_cm, so over IPv6 like the lab). It runs inside the guests, from the
// guest image's libraries; mrclab shares it with every VM (9p tag "mrclab", /opt/mrclab-rdma).
//
//   server ADDR [--port P] [--depth D] [--size BYTES]
//       listens on ADDR, takes one connection, keeps D receives posted and counts the RDMA
//       writes with immediate that land; prints one JSON line when the client goes away.
//   client ADDR [--port P] [--size BYTES] [--depth D] [--seconds S]
//                [--ack-timeout EXP] [--retry-count N]
//       connects (QP local ACK timeout 4.096 us * 2^EXP, N retries), keeps D writes of BYTES
//       in flight for S seconds, and prints one JSON line: bytes, Gbit/s, mean completion
//       latency, the longest time without a completion, and the first failed completion
//       (status, when, how long after the last good one) — the QP's error ends the run, as it
//       ends a job. Start the client once the server listens (`rdma resource show cm_id`
//       shows it LISTEN). Note: rxe never gives up with retry count 7 (rxe_comp.c does not
//       count retries down from 7), so only 0..6 end a QP whose path died.
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string mode, address;
  int port = 18515, depth = 16, retry_count = 7, ack_timeout = 14;
  size_t size = 65536;
  double seconds = 5;
};

struct Remote {  // what the server gives in its accept's private data
  uint64_t addr;
  uint32_t rkey;
  uint32_t size;
};

// A JSON string: quoted, with quotes, backslashes and control characters escaped (what is
// printed may hold the user's address).
std::string Json(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stdout, "{\"error\": %s}\n", Json(what + ": " + std::strerror(errno)).c_str());
  std::exit(1);
}

Options Parse(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: mrclab-rdma server|client ADDR [--port P] [--size BYTES] [--depth D] "
                         "[--seconds S] [--ack-timeout EXP] [--retry-count N]\n");
    std::exit(2);
  }
  Options o;
  o.mode = argv[1];
  o.address = argv[2];
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--port") o.port = std::stoi(v);
    else if (k == "--size") o.size = std::stoul(v);
    else if (k == "--depth") o.depth = std::stoi(v);
    else if (k == "--seconds") o.seconds = std::stod(v);
    else if (k == "--ack-timeout") o.ack_timeout = std::stoi(v);
    else if (k == "--retry-count") o.retry_count = std::stoi(v);
    else {
      std::fprintf(stderr, "mrclab-rdma: unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  if ((o.mode != "server" && o.mode != "client") || o.depth < 1 || o.size < 1 || o.size > (1u << 30)) {
    std::fprintf(stderr, "mrclab-rdma: bad arguments\n");
    std::exit(2);
  }
  return o;
}

sockaddr_in6 Address(const Options& o) {
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  sa.sin6_port = htons(o.port);
  if (inet_pton(AF_INET6, o.address.c_str(), &sa.sin6_addr) != 1) {
    errno = EINVAL;
    Fail("address " + o.address);
  }
  return sa;
}

rdma_cm_event* Expect(rdma_event_channel* ch, rdma_cm_event_type type) {
  rdma_cm_event* e = nullptr;
  if (rdma_get_cm_event(ch, &e) != 0) Fail("rdma_get_cm_event");
  if (e->event != type) {
    errno = e->status < 0 ? -e->status : EPROTO;
    Fail(std::string("expected ") + rdma_event_str(type) + ", got " + rdma_event_str(e->event));
  }
  return e;
}

void NonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// PD, one CQ with a completion channel, an RC QP on `id` and a registered buffer of `bytes`.
struct Endpoint {
  ibv_pd* pd = nullptr;
  ibv_comp_channel* channel = nullptr;
  ibv_cq* cq = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<char> buffer;

  Endpoint(rdma_cm_id* id, const Options& o, size_t bytes) : buffer(bytes) {
    pd = ibv_alloc_pd(id->verbs);
    channel = pd ? ibv_create_comp_channel(id->verbs) : nullptr;
    cq = channel ? ibv_create_cq(id->verbs, o.depth * 2 + 2, nullptr, channel, 0) : nullptr;
    if (!cq) Fail("ibv_alloc_pd/ibv_create_comp_channel/ibv_create_cq");
    NonBlocking(channel->fd);
    ibv_qp_init_attr qa{};
    qa.send_cq = qa.recv_cq = cq;
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = qa.cap.max_recv_wr = o.depth + 1;
    qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
    if (rdma_create_qp(id, pd, &qa) != 0) Fail("rdma_create_qp");
    mr = ibv_reg_mr(pd, buffer.data(), bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!mr) Fail("ibv_reg_mr");
  }

  // Completions, waiting (without spinning: a VM host may have one CPU, which rxe needs too)
  // up to 100 ms for the CQ or `other_fd`.
  int Poll(ibv_wc* wc, int max, int other_fd) {
    int n = ibv_poll_cq(cq, max, wc);
    if (n != 0) return n;
    if (ibv_req_notify_cq(cq, 0) != 0) Fail("ibv_req_notify_cq");
    if ((n = ibv_poll_cq(cq, max, wc)) != 0) return n;  // what came before the notification was armed
    pollfd fds[2] = {{channel->fd, POLLIN, 0}, {other_fd, POLLIN, 0}};
    poll(fds, other_fd >= 0 ? 2 : 1, 100);
    ibv_cq* ev_cq = nullptr;
    void* ctx = nullptr;
    if (ibv_get_cq_event(channel, &ev_cq, &ctx) == 0) ibv_ack_cq_events(ev_cq, 1);
    return ibv_poll_cq(cq, max, wc);
  }
};

void PostRecv(rdma_cm_id* id) {
  ibv_recv_wr wr{}, *bad = nullptr;  // a write with immediate consumes a receive without data
  if (ibv_post_recv(id->qp, &wr, &bad) != 0) Fail("ibv_post_recv");
}

int Server(const Options& o) {
  rdma_event_channel* ch = rdma_create_event_channel();
  rdma_cm_id* listener = nullptr;
  sockaddr_in6 sa = Address(o);
  if (!ch || rdma_create_id(ch, &listener, nullptr, RDMA_PS_TCP) != 0) Fail("rdma_create_id");
  if (rdma_bind_addr(listener, reinterpret_cast<sockaddr*>(&sa)) != 0) Fail("rdma_bind_addr " + o.address);
  if (rdma_listen(listener, 1) != 0) Fail("rdma_listen");
  std::fprintf(stderr, "mrclab-rdma: listening on [%s]:%d\n", o.address.c_str(), o.port);
  rdma_cm_event* e = Expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
  rdma_cm_id* id = e->id;
  rdma_ack_cm_event(e);
  Endpoint ep(id, o, o.size);
  for (int i = 0; i < o.depth + 1; ++i) PostRecv(id);
  Remote remote{reinterpret_cast<uint64_t>(ep.buffer.data()), ep.mr->rkey, static_cast<uint32_t>(o.size)};
  rdma_conn_param cp{};
  cp.private_data = &remote;
  cp.private_data_len = sizeof remote;
  cp.responder_resources = cp.initiator_depth = 1;
  cp.rnr_retry_count = 7;
  if (rdma_accept(id, &cp) != 0) Fail("rdma_accept");
  rdma_ack_cm_event(Expect(ch, RDMA_CM_EVENT_ESTABLISHED));
  uint64_t messages = 0, bytes = 0;
  std::string error;
  const auto start = Clock::now();
  // Until the client disconnects (an event on the channel) or a completion fails.
  NonBlocking(ch->fd);
  for (;;) {
    ibv_wc wc[32];
    const int n = ep.Poll(wc, 32, ch->fd);
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) {
        error = ibv_wc_status_str(wc[i].status);
        break;
      }
      ++messages;
      bytes += wc[i].byte_len;
      PostRecv(id);
    }
    if (!error.empty()) break;
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(ch, &ev) == 0) {
      const bool gone = ev->event == RDMA_CM_EVENT_DISCONNECTED;
      rdma_ack_cm_event(ev);
      if (gone) break;
    }
  }
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("{\"role\": \"server\", \"messages\": %llu, \"bytes\": %llu, \"seconds\": %.3f, \"error\": %s}\n",
              static_cast<unsigned long long>(messages), static_cast<unsigned long long>(bytes), s,
              error.empty() ? "null" : Json(error).c_str());
  rdma_disconnect(id);
  return error.empty() ? 0 : 1;
}

int Client(const Options& o) {
  rdma_event_channel* ch = rdma_create_event_channel();
  rdma_cm_id* id = nullptr;
  sockaddr_in6 sa = Address(o);
  if (!ch || rdma_create_id(ch, &id, nullptr, RDMA_PS_TCP) != 0) Fail("rdma_create_id");
  if (rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr*>(&sa), 5000) != 0) Fail("rdma_resolve_addr");
  rdma_ack_cm_event(Expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
  if (rdma_resolve_route(id, 5000) != 0) Fail("rdma_resolve_route");
  rdma_ack_cm_event(Expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
  uint8_t timeout = static_cast<uint8_t>(o.ack_timeout);
  if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout) != 0)
    Fail("rdma_set_option ACK_TIMEOUT");
  Endpoint ep(id, o, o.size);
  rdma_conn_param cp{};
  cp.responder_resources = cp.initiator_depth = 1;
  cp.retry_count = static_cast<uint8_t>(o.retry_count);
  cp.rnr_retry_count = 7;
  if (rdma_connect(id, &cp) != 0) Fail("rdma_connect");
  rdma_cm_event* e = Expect(ch, RDMA_CM_EVENT_ESTABLISHED);
  Remote remote{};
  std::memcpy(&remote, e->param.conn.private_data, sizeof remote);
  rdma_ack_cm_event(e);

  const auto start = Clock::now(), end = start + std::chrono::duration_cast<Clock::duration>(
                                                     std::chrono::duration<double>(o.seconds));
  std::vector<Clock::time_point> posted(o.depth);
  uint64_t messages = 0, bytes = 0, next = 0;
  double latency_sum = 0, longest_gap = 0;
  Clock::time_point last_completion = start;
  int in_flight = 0;
  struct Error {
    std::string status;
    double at_s, after_last_completion_s;  // since the start; since the last good completion
  };
  std::optional<Error> error;
  auto post = [&] {
    ibv_sge sge{reinterpret_cast<uint64_t>(ep.buffer.data()), static_cast<uint32_t>(o.size), ep.mr->lkey};
    ibv_send_wr wr{}, *bad = nullptr;
    wr.wr_id = next % o.depth;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(static_cast<uint32_t>(next));
    wr.wr.rdma.remote_addr = remote.addr;
    wr.wr.rdma.rkey = remote.rkey;
    posted[next % o.depth] = Clock::now();
    if (ibv_post_send(id->qp, &wr, &bad) != 0) Fail("ibv_post_send");
    ++next;
    ++in_flight;
  };
  while (in_flight < o.depth) post();
  while (in_flight > 0) {
    ibv_wc wc[32];
    const int n = ep.Poll(wc, 32, -1);
    const auto now = Clock::now();
    for (int i = 0; i < n; ++i) {
      --in_flight;
      if (wc[i].status != IBV_WC_SUCCESS) {
        if (!error)
          error = Error{ibv_wc_status_str(wc[i].status), std::chrono::duration<double>(now - start).count(),
                        std::chrono::duration<double>(now - last_completion).count()};
        continue;
      }
      ++messages;
      bytes += o.size;
      latency_sum += std::chrono::duration<double>(now - posted[wc[i].wr_id]).count();
      longest_gap = std::max(longest_gap, std::chrono::duration<double>(now - last_completion).count());
      last_completion = now;
      if (!error && now < end) post();
    }
  }
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("{\"role\": \"client\", \"messages\": %llu, \"bytes\": %llu, \"seconds\": %.3f, \"gbps\": %.4f, "
              "\"latency_us_mean\": %.1f, \"longest_gap_s\": %.3f, \"ack_timeout\": %d, \"retry_count\": %d, "
              "\"error\": %s}\n",
              static_cast<unsigned long long>(messages), static_cast<unsigned long long>(bytes), s,
              bytes * 8 / s / 1e9, messages ? latency_sum / messages * 1e6 : 0.0, longest_gap, o.ack_timeout,
              o.retry_count,
              error ? ("{\"status\": " + Json(error->status) + ", \"at_s\": " + std::to_string(error->at_s) +
                       ", \"after_last_completion_s\": " + std::to_string(error->after_last_completion_s) + "}")
                          .c_str()
                    : "null");
  rdma_disconnect(id);
  return error ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  return o.mode == "server" ? Server(o) : Client(o);
}
