// include/flopwise/sub_byte.h — element types stored under a byte an element: ONNX's 4-bit integers (int4 QDQ
// weights, GatherBlockQuantized's tables), two to a byte, and the bytes a tensor of any type takes as ONNX
// stores it. Owns: nothing else; flopwise/ir.h's DType keeps the whole-byte kinds, whose sizes dtype_size
// gives.
#pragma once

#include "flopwise/dim.h"
#include "flopwise/ir.h"

namespace flopwise {

inline constexpr DType kUInt4 = static_cast<DType>(21);  // ONNX's numbers
inline constexpr DType kInt4 = static_cast<DType>(22);

// Bytes of `numel` elements of type t (the 4-bit kinds packed two to a byte, rounded up); unknown for a type
// of no fixed size (Undefined, String).
Count dtype_bytes(DType t, const Count& numel);

}  // namespace flopwise
