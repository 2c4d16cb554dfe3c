"""Where a GPU fit spends its time: torch's profiler on Chapter 7's builders.

Run on a machine with a CUDA GPU, from the repository root::

    python benchmarks/profile_cuda.py

For a histogram tree at 1M x 10 and a histogram forest of 10 trees at 100k x 10
(the data of ``bench_fast.py``), it prints the wall time, the number of kernel
launches and host-device synchronisations, and the operations that took the
most time on the host (launching) and on the GPU (running).
"""

import time

import torch
from bench_fast import make_data
from torch.profiler import ProfilerActivity, profile

import treelib


def profiled(name, model, X, y):
    model.fit(X[:2000], y[:2000])  # warm-up
    torch.cuda.synchronize()
    start = time.perf_counter()
    model.fit(X, y)
    wall = time.perf_counter() - start
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        model.fit(X, y)
    events = prof.key_averages()
    gpu_total = sum(e.self_device_time_total for e in events) / 1e6
    launches = sum(e.count for e in events if e.key in ("cudaLaunchKernel", "cuLaunchKernel"))
    syncs = sum(e.count for e in events if "Synchronize" in e.key or e.key == "cudaMemcpyAsync")
    print(f"\n== {name}: {wall:.2f} s wall (unprofiled); GPU busy {gpu_total:.2f} s;"
          f" {launches} kernel launches; {syncs} copies/synchronisations")  # fmt: skip
    print(events.table(sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=40))
    print(events.table(sort_by="self_device_time_total", row_limit=8, max_name_column_width=40))


def main():
    print(torch.__version__, torch.cuda.get_device_name())
    X, y, _, _ = make_data(1_000_000, 10, 1000)
    tree = treelib.DecisionTreeClassifier(tree_method="hist", random_state=0, device="cuda")
    profiled("hist tree, 1M x 10", tree, X, y)
    forest = treelib.RandomForestClassifier(10, tree_method="hist", random_state=0, device="cuda")
    profiled("hist forest, 10 trees, 100k x 10", forest, X[:100_000], y[:100_000])


if __name__ == "__main__":
    main()
