"""Memory and CPU of a set of processes, from /proc (for measure-host and measure-player: they
print figures and assert nothing)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def pss_kib(pid: int) -> int:
    """The process's proportional set size (its share of every page it maps), in KiB."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def name(pid: int) -> str:
    return Path(f"/proc/{pid}/comm").read_text().strip()


async def report(what: str, processes: list[int], seconds: float) -> None:
    """Prints the PSS of ``processes`` now and the CPU they use over the next ``seconds``."""
    memory = {pid: pss_kib(pid) for pid in processes}
    before = {pid: cpu_ticks(pid) for pid in processes}
    await asyncio.sleep(seconds)
    used = {pid: cpu_ticks(pid) - before[pid] for pid in processes}
    print(f"{what}: PSS {sum(memory.values()) / 1024:.1f} MiB in {len(processes)} processes; "
          f"CPU {100 * sum(used.values()) / CLOCK_TICKS / seconds:.1f}% of one core over {seconds:g} s")
    for pid in processes:
        print(f"    {name(pid):<16} pid {pid:<7} PSS {memory[pid] / 1024:6.1f} MiB  "
              f"CPU {100 * used[pid] / CLOCK_TICKS / seconds:5.1f}%")
