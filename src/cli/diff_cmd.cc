#include "commands.h"
#include "flopwise/errors.h"

namespace flopwise {

int run_diff(int, char**) { throw UsageError("'flopwise diff' is not available yet"); }

}  // namespace flopwise
