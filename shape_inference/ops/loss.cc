// loss family. (Filled in by its owner; see elementwise.cc for the pattern.)
#include "../helpers.h"

namespace flopwise {

void register_loss_ops(OpRegistry&) {}

}  // namespace flopwise
