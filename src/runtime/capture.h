#pragma once
// Capture: while a CaptureSession is active on a thread, realize() on that thread records every item
// it runs (in execution order) together with the loaded program, besides running it. The JIT
// (tensor/jit.h) captures one call of a function this way and replays the recording (replay.h).
#include <cstdint>
#include <memory>
#include <vector>

#include "schedule/schedule.h"

namespace lg {

class Program;

// One executed schedule item. program is null for copies.
struct CapturedItem {
  ScheduleItem item;
  std::shared_ptr<Program> program;
};

struct Capture {
  std::vector<CapturedItem> items;  // in execution order
  // Buffers with uid >= first_new_uid were created while the session was active.
  uint64_t first_new_uid = 0;
};

// RAII: active from construction to destruction. Sessions do not nest (an internal error).
class CaptureSession {
 public:
  CaptureSession();
  ~CaptureSession();
  CaptureSession(const CaptureSession&) = delete;
  CaptureSession& operator=(const CaptureSession&) = delete;

  // The session active on this thread, or null.
  static CaptureSession* active();
  // Called by realize() for each item it runs, after loading its program (null for a copy).
  void record(const ScheduleItem& item, std::shared_ptr<Program> program);
  // What was recorded so far; the session keeps recording into an empty list afterwards.
  Capture take();

 private:
  Capture capture_;
};

}  // namespace lg
