//===- fp8-opt.cpp - The fp8-opt driver -----------------------------------===//
//
// Part of fp8-opt. An mlir-opt with the fp8 dialect, its passes and
// pipelines, and every upstream dialect and pass (so that tests and users can
// mix fp8 passes with any upstream pass in one invocation).
//
//===----------------------------------------------------------------------===//

#include "fp8/InitAll.h"
#include "fp8/Support/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::fp8::setVersionPrinter("fp8-opt");
  mlir::registerAllPasses();
  mlir::fp8::registerAllFP8Passes();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::fp8::registerAllFP8Dialects(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "fp8-opt: FP8 compiler for transformer graphs\n", registry));
}
