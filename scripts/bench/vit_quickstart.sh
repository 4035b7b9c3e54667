#!/usr/bin/env bash
# Training-step throughput of the quickstart ViT: attnzoo vs the same architecture in Python
# PyTorch (torchvision VisionTransformer), fp32 and bf16, side by side in one run, same threads.
# This VM's speed drifts +-25% over minutes, so the two sides alternate within each precision.
#   scripts/bench/vit_quickstart.sh [--steps N] [--repeats R]
set -euo pipefail
cd "$(dirname "$0")/../.."
steps=30; repeats=3
while (( $# )); do case "$1" in --steps) steps=$2; shift 2 ;; --repeats) repeats=$2; shift 2 ;;
  *) echo "unknown option $1" >&2; exit 2 ;; esac; done
threads=$(nproc)
export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads OMP_WAIT_POLICY=PASSIVE
[[ -x build/attnzoo ]] || scripts/setup.sh
# The twin mirrors configs/quickstart.yaml's model and batch.
twin_args=(--image_size 28 --in_channels 1 --patch_size 7 --d_model 128 --depth 6 --num_heads 4 --mlp_dim 256
           --num_classes 10 --batch_size 128 --threads "$threads" --steps "$steps" --repeats "$repeats")
rate() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])[sys.argv[1]])' "$1"; }

printf "| precision | attnzoo images/s | PyTorch images/s | ratio | params (both) |\n|---|---|---|---|---|\n"
for precision in fp32 bf16; do
  ours=$(build/attnzoo bench configs/quickstart.yaml trainer.precision=$precision --steps "$steps" --repeats "$repeats" 2>/dev/null)
  theirs=$(/usr/bin/python3 scripts/bench/vit_torch_twin.py --precision $precision "${twin_args[@]}")
  a=$(rate median_examples_per_second <<<"$ours"); b=$(rate median_examples_per_second <<<"$theirs")
  pa=$(rate parameters <<<"$ours"); pb=$(rate parameters <<<"$theirs")
  [[ $pa == "$pb" ]] || { echo "parameter counts differ: attnzoo $pa vs PyTorch $pb" >&2; exit 1; }
  printf "| %s | %.0f | %.0f | %.2fx | %s |\n" "$precision" "$a" "$b" "$(python3 -c "print($a/$b)")" "$pa"
done
echo "($threads threads, batch 128, median of $repeats x $steps steps; forward+backward+AdamW on one fixed batch)"
