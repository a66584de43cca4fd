#pragma once
// A shared library opened at run time (dlopen), for GPU drivers and compilers that a build must
// not link against: lazygrad builds and runs without them, and only the devices that need one
// fail, with a user error, when it is missing.
#include <string>
#include <vector>

namespace lg {

class DynLib {
 public:
  // Opens the first of `names` (file names searched by the loader, or paths) that loads; empty
  // when none does, with why() saying what each attempt said.
  explicit DynLib(const std::vector<std::string>& names);
  ~DynLib();
  DynLib(const DynLib&) = delete;
  DynLib& operator=(const DynLib&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }  // the name that loaded
  const std::string& why() const { return why_; }
  // The symbol's address; a missing symbol is a user error naming the library (a driver too old).
  void* symbol(const char* name) const;
  // Assigns symbol(name) to a function pointer of any type.
  template <class F>
  void bind(F*& fn, const char* name) const {
    fn = reinterpret_cast<F*>(symbol(name));
  }

 private:
  void* handle_ = nullptr;
  std::string path_, why_;
};

}  // namespace lg
