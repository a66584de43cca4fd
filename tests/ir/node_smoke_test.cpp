#include <gtest/gtest.h>

#include "ir/build.h"
#include "ir/graph.h"

namespace lg {

TEST(NodeInterning, EqualStructureIsSamePointer) {
  NodeRef a = index_const(3) + index_const(4);
  NodeRef b = index_const(3) + index_const(4);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE((index_const(3) + index_const(5)).get(), a.get());
}

}  // namespace lg
