#!/usr/bin/env bash
# Sets up a machine (Debian packages, data, Release build) and runs the whole GoogleTest suite
# through ctest. .ci/run calls this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
# Two threads per test process: the machine has 2 cores and ctest runs one test at a time.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2} OMP_WAIT_POLICY=PASSIVE
ctest --test-dir build --output-on-failure --timeout 600 "$@"
