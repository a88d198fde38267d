"""Statistics and units shared by the benchmarks."""
import statistics


def percentile(values, p):
    """The nearest-rank percentile `p` (0–100) of `values`, as ipc-bench's `percentile`: the
    smallest value with at least p % of the values at or below it. NaN when there are none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = -(-len(ordered) * p // 100)  # ceil(n · p / 100)
    return ordered[int(max(1, min(len(ordered), rank))) - 1]


def median(values):
    values = list(values)
    return statistics.median(values) if values else float("nan")


def mib(kib):
    return f"{kib / 1024:.1f} MiB"
