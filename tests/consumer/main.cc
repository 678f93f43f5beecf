// tests/consumer/main.cc — analyses one model through an installed flopwise (flopwise::analyse) and prints
// its total MACs with every named dim bound as given: `consumer MODEL [NAME=VALUE]...` prints "macs N".
#include <iostream>
#include <string>

#include "flopwise/analyse.h"
#include "flopwise/errors.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: consumer MODEL [NAME=VALUE]...\n";
    return 2;
  }
  try {
    flopwise::Pins pins;
    for (int i = 2; i < argc; ++i) pins.dims.push_back(flopwise::parse_dim_pin(argv[i]));
    flopwise::Analysis a = flopwise::analyse(argv[1], pins, flopwise::default_convention());
    const flopwise::Count& macs = a.report.totals.macs;
    if (!macs.known) {
      std::cerr << "consumer: MACs not known: " << macs.as_dim().str() << "\n";
      return 1;
    }
    std::cout << "macs " << macs.v << "\n";
  } catch (const std::exception& e) {
    std::cerr << "consumer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
