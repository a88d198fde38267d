"""Instruction counts of a running process under valgrind --tool=callgrind: zeroed and dumped
on demand (callgrind_control), so a window of work is counted alone."""
import glob
import os
import shutil
import subprocess
import time


def available():
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def prefix(out_file):
    """The argv that runs a program under callgrind, its dumps named after `out_file`."""
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"]


def interpreter(python):
    """The Python executable itself behind `python` (a name on PATH or a wrapper such as pyenv's
    shim, a shell script valgrind would run instead, leaving the interpreter it execs unmeasured)."""
    out = subprocess.run([python, "-c", "import sys; print(sys.executable)"], check=True, capture_output=True,
                         text=True, timeout=60)
    return out.stdout.strip()


def strip_debug(binary, destination):
    """A copy of `binary` without debug info: valgrind cannot read the DWARF of the Swift
    toolchain's clang, and the symbol table is enough."""
    subprocess.run(["strip", "--strip-debug", "-o", destination, binary], check=True)
    return destination


def total(path):
    """The Ir total of a callgrind dump (its `totals:` or `summary:` line)."""
    with open(path, errors="replace") as dump_file:
        for line in dump_file:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise RuntimeError(f"{path}: no totals line")


def _control(pid, option):
    """callgrind_control OPTION PID; raises when it finds no callgrind run as `pid` (it says so on
    stdout and still exits 0: for instance when valgrind ran a wrapper script that exec'd the
    program, which then runs without valgrind)."""
    out = subprocess.run(["callgrind_control", option, str(pid)], check=True, capture_output=True, text=True,
                         timeout=120)
    if "Error" in out.stdout or "Error" in out.stderr:
        raise RuntimeError(f"callgrind_control {option} {pid}: {(out.stdout + out.stderr).strip()}")


def zero(pid):
    _control(pid, "--zero")


def dump(pid, out_file, label):
    """Asks the callgrind running as `pid` (dumping to `out_file`…) to dump; returns the new
    dump's instruction total (every thread, libraries included)."""
    pattern = out_file + "*"
    before = set(glob.glob(pattern))
    _control(pid, "--dump=" + label)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for path in set(glob.glob(pattern)) - before:
            try:
                return total(path)
            except RuntimeError:
                pass  # still being written
        time.sleep(0.2)
    raise RuntimeError(f"callgrind ({os.path.basename(out_file)}) wrote no dump")
