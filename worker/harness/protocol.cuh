// The channel between the trusted timer (T, flashjudge-timer) and the student's runner (S,
// flashjudge-runner): fixed-size messages over an AF_UNIX SOCK_SEQPACKET socket, plus one file
// descriptor (the shared GPU memory, exported by T) passed with SCM_RIGHTS in HELLO.
//
//   T -> S  HELLO  shape, slot layout (+ the memory's fd)
//   S -> T  READY  the library loaded and the memory mapped (or why not)
//   T -> S  RUN    request j: solve() on the slots listed, back to back (T lists one slot: it
//                  writes a call's inputs only when the call's turn comes, see timer_batch.cuh)
//   S -> T  DONE   request j finished, with S's own CUDA-event time of every call (a claim only)
//   T -> S  QUIT
//
// Everything S sends is a claim: T times the batch itself and checks every output, so a message
// of the wrong size, kind or batch, or one that arrives out of turn, is recorded as a protocol
// violation (a forked child or a thread writing to the channel), never believed.
// No CUDA here: the channel self-test (channel_selftest.cpp) builds it with a plain C++ compiler.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>

namespace fjt {

constexpr uint32_t kMagic = 0x31544a46u;  // "FJT1"
constexpr uint32_t kMaxCalls = 64;        // calls in one batch at most
constexpr size_t kTextBytes = 240;        // room for one line of explanation

enum class Kind : uint32_t { Hello = 1, Ready = 2, Run = 3, Done = 4, Quit = 5 };

struct Header {
  uint32_t magic;
  uint32_t kind;
};

struct Hello {
  Header h;
  int32_t B, N, d;         // the problem's shape
  uint32_t slots;          // how many (Q, K, V, O) slots the pool holds
  uint64_t pool_bytes;     // size of the shared allocation (the fd passed along)
  uint64_t slot_stride;    // bytes from one slot to the next
  uint64_t tensor_stride;  // bytes from Q to K, K to V, V to O inside a slot
};

struct Ready {
  Header h;
  int32_t ok;  // 1: ready to run; 0: text says what failed
  char text[kTextBytes];
};

struct Run {
  Header h;
  uint32_t batch;             // request number, counting from 0 (T: one per call)
  uint32_t calls;             // 1..kMaxCalls (T sends 1)
  uint32_t slot[kMaxCalls];   // the slot of each call, in order
};

struct Done {
  Header h;
  uint32_t batch;                // echoes Run.batch (the request number)
  uint32_t calls;                // echoes Run.calls
  int32_t ok;                    // 1: every call returned without a CUDA error
  float event_ms[kMaxCalls];     // S's CUDA-event time of each call (claims)
  char text[kTextBytes];         // the error when ok == 0
};

struct Quit {
  Header h;
};

template <typename M>
inline M make(Kind kind) {
  M m;
  std::memset(&m, 0, sizeof(m));
  m.h.magic = kMagic;
  m.h.kind = static_cast<uint32_t>(kind);
  return m;
}

// Sends one message, with `pass_fd` attached when it is >= 0. Returns 0 or -errno.
inline int send_msg(int sock, const void* msg, size_t bytes, int pass_fd = -1) {
  iovec iov{const_cast<void*>(msg), bytes};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (pass_fd >= 0) {
    std::memset(control, 0, sizeof(control));
    mh.msg_control = control;
    mh.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  }
  ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
  if (n < 0) return -errno;
  return static_cast<size_t>(n) == bytes ? 0 : -EMSGSIZE;
}

inline double monotonic_us() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

// Waits until `sock` is readable: first spinning (poll without a timeout) for up to spin_us, then
// blocking for what is left of timeout_ms (-1: forever). Why spin: on a virtual machine a thread
// blocked in poll can take ~0.6 ms to be woken, and T's clock would count it (seen on an H100
// node, 2026-11-24: 10-25% of batches 0.6 ms over the calibrated overhead). Returns poll's answer.
inline int wait_readable(int sock, int timeout_ms, long spin_us) {
  pollfd p{sock, POLLIN, 0};
  const double start = monotonic_us();
  while (spin_us > 0 && monotonic_us() - start < spin_us) {
    int ready = poll(&p, 1, 0);
    if (ready != 0 && !(ready < 0 && errno == EINTR)) return ready;
  }
  if (timeout_ms >= 0) {
    timeout_ms -= static_cast<int>((monotonic_us() - start) / 1000);
    if (timeout_ms < 0) timeout_ms = 0;
  }
  int ready;
  do ready = poll(&p, 1, timeout_ms); while (ready < 0 && errno == EINTR);
  return ready;
}

// Waits up to timeout_ms (-1: forever) for one message, spinning for the first spin_us (see
// wait_readable). Returns its size, 0 at end of stream, -ETIMEDOUT, or -errno. A message longer
// than `cap` comes back as cap + 1 (truncated: wrong). Descriptors passed along are kept in
// *got_fd when asked for (the first one), closed otherwise.
inline long recv_msg(int sock, void* buf, size_t cap, int timeout_ms, int* got_fd = nullptr,
                     long spin_us = 0) {
  if (got_fd) *got_fd = -1;
  int ready = wait_readable(sock, timeout_ms, spin_us);
  if (ready < 0) return -errno;
  if (ready == 0) return -ETIMEDOUT;
  iovec iov{buf, cap};
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof(control);
  ssize_t n;
  do n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC); while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (got_fd && *got_fd < 0) *got_fd = fd; else close(fd);
    }
  }
  if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) return static_cast<long>(cap) + 1;
  return static_cast<long>(n);
}

// True when something is waiting to be read (or the peer hung up): used by T just before it
// sends RUN, where nothing may be pending, and right after DONE, where nothing may follow.
inline bool pending(int sock) {
  pollfd p{sock, POLLIN, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

// Why a DONE of `bytes` bytes is not the answer to RUN (batch, calls); nullptr when it is.
inline const char* check_done(const Done& m, long bytes, uint32_t batch, uint32_t calls) {
  if (bytes != static_cast<long>(sizeof(Done))) return "a reply of the wrong size";
  if (m.h.magic != kMagic || m.h.kind != static_cast<uint32_t>(Kind::Done))
    return "a reply that is not DONE";
  if (m.batch != batch) return "a reply for another batch";
  if (m.calls != calls) return "a reply with another number of calls";
  return nullptr;
}

// Why a READY of `bytes` bytes is malformed; nullptr when well formed.
inline const char* check_ready(const Ready& m, long bytes) {
  if (bytes != static_cast<long>(sizeof(Ready))) return "a READY of the wrong size";
  if (m.h.magic != kMagic || m.h.kind != static_cast<uint32_t>(Kind::Ready))
    return "a first message that is not READY";
  return nullptr;
}

// A listening SOCK_SEQPACKET socket at `path` (T's side when not given an inherited one).
// The socket is made connectable by every uid (mode 0777, set through the umask so that it is
// never there with fewer rights): connecting needs write permission on it, and the runner's
// sandbox may run under another host uid than the timer's (bwrap falls back to the worker's uid
// when a bind of the runner's, such as the triton runner's virtualenv or JIT cache, lies where
// the unprivileged uid cannot reach). The channel directory is bound into these two sandboxes
// only, so nobody else can reach the socket.
inline int listen_at(const char* path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof(addr.sun_path)) return -ENAMETOOLONG;
  std::strcpy(addr.sun_path, path);
  int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0) return -errno;
  unlink(path);
  mode_t umask_before = umask(0);
  int bound = bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  umask(umask_before);
  if (bound < 0 || listen(s, 1) < 0) {
    int err = errno;
    close(s);
    return -err;
  }
  return s;
}

// Accepts the one peer within timeout_ms; the listening socket is closed (nobody else gets in).
inline int accept_one(int listener, int timeout_ms) {
  pollfd p{listener, POLLIN, 0};
  int ready;
  do ready = poll(&p, 1, timeout_ms); while (ready < 0 && errno == EINTR);
  int s = ready > 0 ? accept4(listener, nullptr, nullptr, SOCK_CLOEXEC) : -1;
  int err = ready == 0 ? ETIMEDOUT : errno;
  close(listener);
  return s >= 0 ? s : -err;
}

// S's side: connects to T's socket at `path`.
inline int connect_to(const char* path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof(addr.sun_path)) return -ENAMETOOLONG;
  std::strcpy(addr.sun_path, path);
  int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0) return -errno;
  if (connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0) {
    int err = errno;
    close(s);
    return -err;
  }
  return s;
}

}  // namespace fjt
