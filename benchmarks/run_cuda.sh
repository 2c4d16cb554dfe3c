#!/usr/bin/env bash
# Chapter 7 on a CUDA GPU (issue 15, item 5): the GPU tests, then the benchmark.
# Run from the repository root on a machine with a CUDA GPU and a Python that has
# torch (a CUDA build), scikit-learn, pytest and pytest-xdist:
#     bash benchmarks/run_cuda.sh RUN_NAME
# The rows go to benchmarks/results/fast_fit_cuda.csv (or $CSV), the profile to
# benchmarks/results/profile_cuda.txt (or $PROFILE); treelib is imported from
# this checkout. A forest grows on a GPU in one batch of all its trees
# (treelib/batched.py, GPU_BATCH_SCALE), whatever --jobs says.
set -u
RUN=${1:-cuda}
PY=${PY:-python3}
CSV=${CSV:-benchmarks/results/fast_fit_cuda.csv}
PROFILE=${PROFILE:-benchmarks/results/profile_cuda.txt}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
$PY -c "import torch, sklearn, numpy; print('torch', torch.__version__, 'scikit-learn', sklearn.__version__, 'numpy', numpy.__version__)"
$PY -m pytest tests/test_cuda.py tests/test_tree_contract.py -q -n 8 -p no:cacheprovider -rs --durations=5
bench="$PY benchmarks/bench_fast.py --device cuda --out $CSV"
$bench --sizes 100000 1000000 --features 10 --methods sklearn levelwise hist --run "$RUN"
$bench --forest-only --jobs 1 -1 --run "$RUN-forest"
(cd benchmarks && $PY profile_cuda.py) > "$PROFILE"
