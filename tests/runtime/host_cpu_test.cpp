// The host processor's signature (runtime/host_cpu.h), which keys compiled CPU kernels: the fields
// it reads from /proc/cpuinfo, what changes it and what does not.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "runtime/device.h"
#include "runtime/host_cpu.h"

namespace lg {
namespace {

// Two processors' blocks as Linux prints them (abridged): the signature reads the first only.
std::string intel(const std::string& flags, const std::string& model = "143") {
  return "processor\t: 0\n"
         "vendor_id\t: GenuineIntel\n"
         "cpu family\t: 6\n"
         "model\t\t: " +
         model +
         "\n"
         "model name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz\n"
         "cpu MHz\t\t: 2699.998\n"
         "flags\t\t: " +
         flags +
         "\n"
         "bogomips\t: 5399.99\n"
         "\n"
         "processor\t: 1\n"
         "vendor_id\t: GenuineIntel\n"
         "cpu family\t: 6\n"
         "model\t\t: 1\n"
         "flags\t\t: fpu\n"
         "\n";
}

constexpr const char* kFlags = "fpu sse sse2 avx avx2 avx512f avx512bw avx512_bf16 amx_bf16 amx_tile";

TEST(HostCpu, TheSignatureNamesVendorFamilyAndModelAndHashesTheFlags) {
  std::string s = cpu_signature_of(intel(kFlags));
  EXPECT_EQ(s.rfind("GenuineIntel 6/143 flags ", 0), 0u) << s;  // "model name" is not "model"
  std::string hash = s.substr(std::string("GenuineIntel 6/143 flags ").size());
  EXPECT_EQ(hash.size(), 16u) << s;
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos) << s;
}

TEST(HostCpu, AnotherFlagOrModelIsAnotherSignature) {
  std::string base = cpu_signature_of(intel(kFlags));
  // a machine without AMX (its kernels must not be handed ones that use it)
  EXPECT_NE(cpu_signature_of(intel("fpu sse sse2 avx avx2 avx512f avx512bw avx512_bf16")), base);
  EXPECT_NE(cpu_signature_of(intel(kFlags, "207")), base);
}

TEST(HostCpu, ClockNameAndLaterProcessorsDoNotChangeIt) {
  std::string a = intel(kFlags), b = a;
  b.replace(b.find("2699.998"), 8, "3100.000");
  b.replace(b.find("8481C"), 5, "8581C");
  b.replace(b.find("flags\t\t: fpu\n"), 12, "flags\t\t: fpu sse\n");  // the second processor's block
  EXPECT_EQ(cpu_signature_of(a), cpu_signature_of(b));
}

TEST(HostCpu, ArmFieldsAndMissingOnes) {
  std::string arm =
      "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics "
      "sve\n"
      "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd40\n\n";
  std::string s = cpu_signature_of(arm);
  EXPECT_EQ(s.rfind("0x41 8/0xd40 flags ", 0), 0u) << s;
  EXPECT_NE(s, cpu_signature_of("processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n"
                                "CPU architecture: 8\nCPU part\t: 0xd40\n"));
  EXPECT_EQ(cpu_signature_of(""), "? ?/? flags ?");
  EXPECT_EQ(cpu_signature_of("\n\nno colon here\nvendor_id : X\n"), "X ?/? flags ?");
}

TEST(HostCpu, TheModelNameForPeople) {
  EXPECT_EQ(cpu_model_of(intel(kFlags)), "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz");
  EXPECT_EQ(cpu_model_of("processor\t: 0\nFeatures\t: fp asimd\nCPU part\t: 0xd40\n\nHardware\t: BCM2835\n"),
            "unknown processor");  // Hardware after the first block: not read
  EXPECT_EQ(cpu_model_of("processor\t: 0\nFeatures\t: fp asimd\nHardware\t: BCM2835\n"), "BCM2835");
  EXPECT_EQ(cpu_model_of(""), "unknown processor");
}

TEST(HostCpu, TheHostsSignatureIsThatOfProcCpuinfoAndKeysCpuKernels) {
  std::ifstream f("/proc/cpuinfo");
  if (!f) GTEST_SKIP() << "no /proc/cpuinfo on this machine";
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_EQ(host_cpu_signature(), cpu_signature_of(text.str()));
  EXPECT_EQ(host_cpu_model(), cpu_model_of(text.str()));
  if (size_t at = text.str().find("model name"); at != std::string::npos) {  // x86: its first line's value
    EXPECT_NE(text.str().find(": " + host_cpu_model() + "\n", at), std::string::npos) << host_cpu_model();
  }
  Device& cpu = get_device("CPU");
  ASSERT_NE(cpu.compiler(), nullptr);
  EXPECT_NE(cpu.compiler()->key().find("(" + host_cpu_signature() + ")"), std::string::npos)
      << cpu.compiler()->key();
}

}  // namespace
}  // namespace lg
