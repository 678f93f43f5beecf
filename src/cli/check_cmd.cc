#include "commands.h"
#include "flopwise/errors.h"

namespace flopwise {

int run_check(int, char**) { throw UsageError("'flopwise check' is not available yet"); }

}  // namespace flopwise
