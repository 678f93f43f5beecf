// tests/test_pt2_read.cc — the .pt2 reader (src/pt2): zip, layouts, schema versions, arguments, symbolic sizes.
#include <doctest/doctest.h>
TEST_CASE("pt2: placeholder") {}
