#pragma once
// INTERP: the reference device. It runs a LinearProgram op by op in plain scalar C++, with every ALU
// op evaluated by ir/scalar.cpp (the living definition of the ops) and every memory access bounds
// checked. It is slow on purpose: it is what the other devices are checked against.
#include <memory>
#include <string>

#include "runtime/device.h"

namespace lg {

std::unique_ptr<Device> make_interp_device(const std::string& name);

}  // namespace lg
