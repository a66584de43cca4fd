#pragma once
// What `-march=native` means on this machine, for the keys of compiled CPU kernels.
//
// CPU kernels are compiled for the host's own instruction set. A cache folder shared by machines of
// different processors (a home directory on NFS, a container volume, a copied build folder) would
// otherwise hand one machine's kernels to another, where an instruction it lacks (AMX, AVX512-FP16,
// VP2INTERSECT...) stops the process with SIGILL. The signature names the processor (vendor,
// family, model) and its feature flags as the kernel reports them in /proc/cpuinfo, so kernels
// compile again on a machine whose features differ, and are shared by machines whose do not.
#include <string>
#include <string_view>

namespace lg {

// The signature of /proc/cpuinfo's text (its first processor's block), e.g.
// "GenuineIntel 6/143 flags 0123456789abcdef": vendor, family/model, a 64-bit hash of the feature
// flags in order. x86 names the fields vendor_id, cpu family, model and flags; Arm names them CPU
// implementer, CPU architecture, CPU part and Features. A field that is missing reads "?".
std::string cpu_signature_of(std::string_view cpuinfo);

// cpu_signature_of(/proc/cpuinfo), read once per process; "unknown cpu" when it cannot be read.
const std::string& host_cpu_signature();

// The processor's name for people ("model name" on x86, "Model" or "Hardware" on Arm, from the
// first block), e.g. "Intel(R) Xeon(R) Processor"; "unknown processor" without one. What MLPerf
// logs name as the platform of a CPU run.
std::string cpu_model_of(std::string_view cpuinfo);
const std::string& host_cpu_model();  // of /proc/cpuinfo, read once per process

}  // namespace lg
