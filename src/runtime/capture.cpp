#include "runtime/capture.h"

#include "base/error.h"
#include "ir/build.h"

namespace lg {
namespace {
thread_local CaptureSession* active_session = nullptr;
}  // namespace

CaptureSession::CaptureSession() {
  LG_CHECK(active_session == nullptr, "capture sessions do not nest");
  capture_.first_new_uid = next_buffer_uid();
  active_session = this;
}

CaptureSession::~CaptureSession() { active_session = nullptr; }

CaptureSession* CaptureSession::active() { return active_session; }

void CaptureSession::record(const ScheduleItem& item, std::shared_ptr<Program> program) {
  capture_.items.push_back({item, std::move(program)});
}

Capture CaptureSession::take() {
  Capture out = std::move(capture_);
  capture_ = Capture{};
  capture_.first_new_uid = out.first_new_uid;
  return out;
}

}  // namespace lg
