#include "dist/mpi_transport.h"

#include <mpi.h>

#include <chrono>
#include <thread>
#include <vector>

#include "base/error.h"

namespace lg::dist {
namespace {

constexpr int kTag = 7;
constexpr size_t kPiece = size_t{1} << 30;

class MpiTransport : public Transport {
 public:
  MpiTransport(double timeout_s, LinkModel link) : timeout_s_(timeout_s), link_(link) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiTransport() override {
    for (MPI_Request& r : sends_) MPI_Request_free(&r);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void send(int peer, const void* data, size_t bytes) override {
    const char* p = static_cast<const char*>(data);
    for (size_t at = 0; at < bytes || at == 0; at += kPiece) {
      int n = static_cast<int>(std::min(kPiece, bytes - at));
      MPI_Request r;
      check(MPI_Isend(p + at, n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD, &r), "MPI_Isend", peer);
      sends_.push_back(r);
      if (bytes == 0) break;
    }
  }

  void recv(int peer, void* data, size_t bytes) override {
    auto t0 = std::chrono::steady_clock::now();
    char* p = static_cast<char*>(data);
    for (size_t at = 0; at < bytes || at == 0; at += kPiece) {
      int n = static_cast<int>(std::min(kPiece, bytes - at));
      MPI_Request r;
      check(MPI_Irecv(p + at, n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD, &r), "MPI_Irecv", peer);
      MPI_Status st;
      wait(&r, &st, peer, "receiving from");
      int got = 0;
      MPI_Get_count(&st, MPI_BYTE, &got);
      LG_USER_CHECK(got == n, "distributed: process ", peer, " sent ", got, " bytes where ", n,
                    " were expected: the processes run different schedules (same model, batch, devices "
                    "and flags on every process?)");
      if (bytes == 0) break;
    }
    if (link_.gbps > 0 || link_.latency_us > 0) {  // the simulated slower link
      double s = link_.latency_us * 1e-6 + (link_.gbps > 0 ? static_cast<double>(bytes) / (link_.gbps * 1e9) : 0);
      std::this_thread::sleep_until(t0 + std::chrono::duration<double>(s));
    }
  }

  void wait_sends() override {
    for (MPI_Request& r : sends_) {
      MPI_Status st;
      wait(&r, &st, -1, "sending to");
    }
    sends_.clear();
  }

 private:
  void check(int rc, const char* call, int peer) const {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    user_error("distributed: ", call, " with process ", peer, " failed: ", std::string(msg, len));
  }
  // Polls r until it completes or the deadline passes.
  void wait(MPI_Request* r, MPI_Status* st, int peer, const char* what) const {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
    int done = 0;
    for (int spins = 0;; spins++) {
      check(MPI_Test(r, &done, st), "MPI_Test", peer);
      if (done) return;
      if (std::chrono::steady_clock::now() > deadline)
        user_error("distributed: process ", rank_, " waited ", timeout_s_, " s ", what, " process ",
                   peer < 0 ? std::string("(a peer)") : std::to_string(peer),
                   " without progress; that process died or stalled (LAZYGRAD_DIST_TIMEOUT sets the limit)");
      if (spins > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  int rank_ = 0, size_ = 1;
  double timeout_s_;
  LinkModel link_;
  std::vector<MPI_Request> sends_;
};

}  // namespace

std::shared_ptr<Transport> make_mpi_transport(double timeout_s, LinkModel link) {
  return std::make_shared<MpiTransport>(timeout_s, link);
}

}  // namespace lg::dist
