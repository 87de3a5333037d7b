# -*- Python -*-
# lit configuration for fp8-opt's regression and execution tests.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "FP8OPT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fp8_obj_root, "test")
config.excludes = [
    "CMakeLists.txt",
    "lit.cfg.py",
    "lit.site.cfg.py",
    "unittests",
    "consumer",
    "reference",
    "Inputs",
]

# Captured FileCheck variables stay local to their CHECK-LABEL block.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.use_default_substitutions()
llvm_config.add_tool_substitutions(
    ["fp8-opt", "fp8-translate", "fp8-compile", "fp8-run", "fp8-pack",
     "FileCheck", "not", "count", "split-file", "llvm-nm", "llvm-readelf"],
    [config.fp8_tools_dir, config.llvm_tools_dir],
)

# Python code runs with Debian's interpreter, which has the modules that
# scripts/setup.sh installs (python3-numpy, python3-onnx; test/Tools/deps.test
# checks that it installs every one used) while a pyenv one may not.
python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else shutil.which("python3")
config.substitutions.append(("%python", python))
config.substitutions.append(("%lit", os.path.join(config.llvm_tools_dir, "lit")))


# What scripts/setup.sh and scripts/ort/install.sh install must be there when
# FP8_REQUIRE_DEPS=1 (the ctest entry `lit` sets it: scripts/test.sh, CI): a
# missing one is then a configuration error instead of UNSUPPORTED tests.
# Plain lit runs (check-fp8, lit -v ...) report such tests UNSUPPORTED. The
# shared models and the CUDA toolkit are optional either way.
config.require_deps = os.environ.get("FP8_REQUIRE_DEPS") == "1"


def missing_dependency(what):
    if config.require_deps:
        lit_config.fatal(f"{what}; FP8_REQUIRE_DEPS=1 requires it")


config.substitutions.append(
    ("%reference", os.path.join(config.test_source_root, "reference"))
)

# Execution tests JIT the lowered module with MLIR's runner and its
# memref-printing runtime.
runner_libs = ",".join(
    os.path.join(config.llvm_lib_dir, lib)
    for lib in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so")
)
config.substitutions.append(
    (
        "%mlir-runner",
        "%s -e main -entry-point-result=void -shared-libs=%s"
        % (os.path.join(config.llvm_tools_dir, "mlir-runner"), runner_libs),
    )
)

# Real exported transformers: the bundled one, and the shared set (beside the
# checkout, as on developer machines and in CI) when present.
config.substitutions.append(("%fp8_src", config.fp8_src_root))
config.substitutions.append(("%fp8_obj", config.fp8_obj_root))
shared_models = os.path.join(os.path.dirname(config.fp8_src_root), "shared", "models")
if os.path.isdir(shared_models):
    config.available_features.add("shared-models")
    config.substitutions.append(("%shared_models", shared_models))
# A sanitized build (scripts/sanitize.sh): ASan reserves terabytes of
# shadow address space, so tests that run a tool under `ulimit -v` cannot.
if "address" in getattr(config, "fp8_sanitize", ""):
    config.available_features.add("asan")

# Random-input model tests (test/ORT): the reference is onnxruntime-node (CPU),
# installed by scripts/ort/install.sh into <build>/ort (or $FP8_ORT_PREFIX, as
# for scripts/make_random_testdata.py); without it (or without Node.js) those
# tests are unsupported.
ort_prefix = os.environ.get("FP8_ORT_PREFIX", os.path.join(config.fp8_obj_root, "ort"))
node = shutil.which("node")
if node and os.path.isdir(os.path.join(ort_prefix, "node_modules", "onnxruntime-node")):
    config.available_features.add("onnxruntime-node")
    config.substitutions.append(("%ort_prefix", ort_prefix))
    config.substitutions.append(("%node", node))
elif not node:
    missing_dependency("Node.js not found (scripts/setup.sh installs it)")
else:
    missing_dependency(f"onnxruntime-node not found in {ort_prefix} "
                       f"(run scripts/ort/install.sh {ort_prefix})")
