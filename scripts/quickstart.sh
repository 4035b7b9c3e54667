#!/usr/bin/env bash
# From a fresh Debian 12 machine to a trained Vision Transformer: installs what is missing,
# builds, fetches Fashion-MNIST from Debian, and trains configs/quickstart.yaml (a few minutes).
# Extra arguments go to `attnzoo train`, e.g. scripts/quickstart.sh trainer.epochs=1
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/attnzoo train configs/quickstart.yaml "$@"
