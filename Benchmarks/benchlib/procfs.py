"""Readers of /proc for the benchmarks: memory, CPU time, threads."""
import glob
import os

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def status(pid):
    """The `kB` fields of /proc/PID/status (VmRSS, VmHWM, RssAnon, RssFile, …) in KiB, and
    Threads; empty when the process is gone."""
    fields = {}
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                parts = value.split()
                if len(parts) == 2 and parts[1] == "kB":
                    fields[key] = int(parts[0])
                elif key == "Threads" and parts:
                    fields[key] = int(parts[0])
    except OSError:
        pass
    return fields


def rss_kib(pid, field="VmRSS"):
    """One memory field of /proc/PID/status in KiB (0 when absent)."""
    return status(pid).get(field, 0)


def _stat_fields(path):
    """The fields of a /proc/…/stat file after the command name, and the name."""
    with open(path) as handle:
        text = handle.read()
    name = text[text.index("(") + 1:text.rindex(")")]
    return name, text[text.rindex(")") + 2:].split()


def cpu_seconds(pid):
    """utime + stime of the whole process (every thread, the ended ones included), in seconds;
    0.0 when the process is gone."""
    try:
        _, fields = _stat_fields(f"/proc/{pid}/stat")
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    except (OSError, IndexError, ValueError):
        return 0.0


def thread_cpu(pid):
    """{tid: (name, utime + stime in seconds)} of the process's live threads; the main thread's
    name is "main" (the kernel names it after the executable)."""
    threads = {}
    for path in glob.glob(f"/proc/{pid}/task/*/stat"):
        tid = int(path.split("/")[-2])
        try:
            name, fields = _stat_fields(path)
        except (OSError, ValueError):
            continue  # the thread ended between the listing and the read
        threads[tid] = ("main" if tid == pid else name, (int(fields[11]) + int(fields[12])) / CLOCK_TICKS)
    return threads


def thread_names(pid):
    """The names of the process's threads, the main thread as "main" (the kernel keeps 15
    characters of a name)."""
    return [name for _, (name, _) in sorted(thread_cpu(pid).items())]


class CPUSnapshot:
    """CPU time of a process and of each of its threads at one moment."""

    def __init__(self, pid):
        self.total = cpu_seconds(pid)
        self.threads = thread_cpu(pid)

    def since(self, earlier, groups):
        """CPU seconds between `earlier` and this snapshot: the total, then one entry per group
        of `groups` ([(label, predicate on the thread name)], first match wins), then "others"
        (the rest, the threads that ended in between included)."""
        spent = {"total": self.total - earlier.total}
        for label, _ in groups:
            spent[label] = 0.0
        for tid, (name, seconds) in self.threads.items():
            before = earlier.threads.get(tid, (name, 0.0))[1]
            for label, matches in groups:
                if matches(name):
                    spent[label] += seconds - before
                    break
        spent["others"] = spent["total"] - sum(spent[label] for label, _ in groups)
        return spent
