// The environment knobs (base/config.h): each is read with its range, and a value out of it is a user
// error naming the variable, what it means and its range, never a silent default or a hang.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "base/config.h"
#include "base/error.h"
#include "common/user_error.h"

namespace lg {
namespace {

using testing_util::error_of;

// Sets one variable for the test's lifetime and reloads the configuration around it.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~EnvVar() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
    config_reload();
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// The error config_reload() raises with name=value set ("" when it accepts the value).
std::string reload_error(const char* name, const char* value) {
  EnvVar v(name, value);
  return error_of([] { config_reload(); });
}

TEST(Config, ValuesInRangeAreRead) {
  {
    EnvVar t("THREADS", "3"), s("SPEC", "2"), r("RING", "2"), p("PACK", "0"), c("CACHE", "0");
    config_reload();
    EXPECT_EQ(config().threads, 3);
    EXPECT_EQ(cpu_threads(), 3);
    EXPECT_EQ(config().spec, 2);
    EXPECT_EQ(config().ring, 2);
    EXPECT_FALSE(config().pack);
    EXPECT_FALSE(config().cache);
  }
  {
    EnvVar t("THREADS", "0"), f("FLASH_ATTENTION", "1");
    config_reload();
    EXPECT_GE(cpu_threads(), 1);  // 0: one per hardware thread
    EXPECT_TRUE(config().flash_attention);
  }
  {
    EnvVar empty("PACK", "");  // set but empty: the default
    config_reload();
    EXPECT_TRUE(config().pack);
  }
}

TEST(Config, IntegersOutOfRangeNameTheVariableAndRange) {
  EXPECT_EQ(reload_error("THREADS", "100000"),
            "environment variable THREADS=100000 is out of range: THREADS is the CPU device's threads "
            "(0: one per hardware thread), from 0 to 1024");
  EXPECT_NE(reload_error("THREADS", "-2").find("THREADS=-2 is out of range"), std::string::npos);
  EXPECT_EQ(reload_error("SPEC", "9"),
            "environment variable SPEC=9 is out of range: SPEC is the graph checks (0 none, 1 at stage "
            "boundaries, 2 after every rewrite), from 0 to 2");
  EXPECT_EQ(reload_error("BEAM", "-1"),
            "environment variable BEAM=-1 is out of range: BEAM is the BEAM search width (0: the heuristic's "
            "Opts), from 0 up");
  EXPECT_NE(reload_error("DEBUG", "-1").find("DEBUG=-1 is out of range"), std::string::npos);
  EXPECT_NE(reload_error("PROFILE", "-5").find("PROFILE=-5 is out of range"), std::string::npos);
  EXPECT_NE(reload_error("RING", "3").find("from 0 to 2"), std::string::npos);
  EXPECT_NE(reload_error("ALL2ALL", "-1").find("from 0 to 2"), std::string::npos);
  EXPECT_NE(reload_error("ALLREDUCE_NODE_NDEVS", "-4").find("ALLREDUCE_NODE_NDEVS=-4 is out of range"),
            std::string::npos);
  EXPECT_EQ(reload_error("DEBUG", "7"), "");  // levels above 5 print what 5 prints
}

TEST(Config, SwitchesAreZeroOrOne) {
  EXPECT_EQ(reload_error("NOOPT", "2"),
            "environment variable NOOPT=2 is not 0 or 1 (NOOPT=1 runs kernels without Opts; unset, it is 0)");
  EXPECT_EQ(reload_error("STREAM_STORES", "-1"),
            "environment variable STREAM_STORES=-1 is not 0 or 1 (STREAM_STORES=1 writes large CPU kernel "
            "outputs with streaming stores; unset, it is 1)");
  for (const char* name : {"CACHE", "TC", "BLOCK_MMA", "SMEM", "FLASH_ATTENTION", "MULTI_OUTPUT", "KBLOCK",
                           "PACK", "RECYCLE_PAGES", "ALLREDUCE_CAST"}) {
    EXPECT_NE(reload_error(name, "5").find(std::string(name) + "=5 is not 0 or 1"), std::string::npos)
        << name;
    EXPECT_EQ(reload_error(name, "0"), "") << name;
    EXPECT_EQ(reload_error(name, "1"), "") << name;
  }
}

TEST(Config, MalformedNumbersAreUserErrors) {
  EXPECT_EQ(
      reload_error("THREADS", "abc"),
      "environment variable THREADS=\"abc\" is not an integer; set it to a whole number such as THREADS=1");
  EXPECT_NE(reload_error("BEAM", "4x").find("is not an integer"), std::string::npos);
  EXPECT_EQ(reload_error("BEAM", "99999999999"),
            "environment variable BEAM=\"99999999999\" is too large a number");
  EXPECT_NE(reload_error("DEBUG", "-99999999999999999999999").find("too large a number"), std::string::npos);
}

TEST(Config, NumbersOfTheDistributedRun) {
  {
    EnvVar g("LAZYGRAD_SIM_LINK_GBPS", "0.5");
    EXPECT_DOUBLE_EQ(env_double_at_least("LAZYGRAD_SIM_LINK_GBPS", 0, 0, "the link"), 0.5);
  }
  EXPECT_EQ(env_double_at_least("LAZYGRAD_SIM_LINK_GBPS", 2, 0, "the link"), 2);  // unset: the default
  for (const char* bad : {"fast", "-1", "nan", "inf", "1e999", "2GB"}) {
    EnvVar g("LAZYGRAD_SIM_LINK_GBPS", bad);
    EXPECT_EQ(
        error_of([] { env_double_at_least("LAZYGRAD_SIM_LINK_GBPS", 0, 0, "the simulated link's GB/s"); }),
        std::string("environment variable LAZYGRAD_SIM_LINK_GBPS=\"") + bad +
            "\" is not a number of at least 0 (LAZYGRAD_SIM_LINK_GBPS is the simulated link's GB/s)")
        << bad;
  }
  EnvVar t("LAZYGRAD_DIST_TIMEOUT", "0");
  EXPECT_NE(
      error_of([] {
        env_int_in("LAZYGRAD_DIST_TIMEOUT", 300, 1, 1 << 30, "the seconds");
      }).find("LAZYGRAD_DIST_TIMEOUT=0 is out of range: LAZYGRAD_DIST_TIMEOUT is the seconds, from 1 to "),
      std::string::npos);
}

}  // namespace
}  // namespace lg
