#include "runtime/dynlib.h"

#include <dlfcn.h>

#include "base/error.h"

namespace lg {

DynLib::DynLib(const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    handle_ = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) {
      path_ = n;
      return;
    }
    const char* e = dlerror();
    why_ += str(why_.empty() ? "" : "; ", e ? e : n + ": not loadable");
  }
}

DynLib::~DynLib() {
  if (handle_) dlclose(handle_);
}

void* DynLib::symbol(const char* name) const {
  LG_CHECK(handle_ != nullptr, "symbol ", name, " of a library that did not load");
  void* p = dlsym(handle_, name);
  LG_USER_CHECK(p != nullptr, path_, " has no symbol ", name, " (a driver or toolkit too old for lazygrad?)");
  return p;
}

}  // namespace lg
