#!/usr/bin/env bash
# Chapter 7 on a CUDA GPU (issue 15, item 5): the GPU tests, then the benchmark.
# Run from the repository root on a machine with a CUDA GPU and a Python that has
# torch (a CUDA build), scikit-learn, pytest and pytest-xdist:
#     bash benchmarks/run_cuda.sh RUN_NAME
# The rows go to benchmarks/results/fast_fit_cuda.csv (or $CSV); treelib is
# imported from this checkout.
set -u
RUN=${1:-cuda}
PY=${PY:-python3}
CSV=${CSV:-benchmarks/results/fast_fit_cuda.csv}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
$PY -c "import torch, sklearn, numpy; print('torch', torch.__version__, 'scikit-learn', sklearn.__version__, 'numpy', numpy.__version__)"
$PY -m pytest tests/test_cuda.py tests/test_tree_contract.py -q -n 4 -p no:cacheprovider -rs --durations=5
bench="$PY benchmarks/bench_fast.py --device cuda --out $CSV"
$bench --sizes 100000 1000000 --features 10 --methods sklearn levelwise hist --run "$RUN"
$bench --forest-only --jobs 1 -1 --run "$RUN-forest"
$bench --forest-only --jobs 1 --forest-methods levelwise hist --trees-per-batch 100 --run "$RUN-forest-b100"
