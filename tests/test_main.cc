// tests/test_main.cc — doctest's main() for the test binaries.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
