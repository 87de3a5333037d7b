//===- FP8.td - FP8 dialect umbrella -----------------------*- tablegen -*-===//
#ifndef FP8_TD
#define FP8_TD

include "FP8/FP8Dialect.td"
include "FP8/FP8Enums.td"
include "FP8/FP8Attributes.td"
include "FP8/FP8Ops.td"

#endif // FP8_TD
