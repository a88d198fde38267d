"""What the benchmark scripts share (import with Benchmarks/ on sys.path):

  procfs     the /proc readers: memory, CPU of a process and of each of its threads, thread names
  stats      the one percentile definition (nearest rank, as ipc-bench's), medians, units
  children   child processes: started and waited for by a line they print, driven by commands
             on stdin, stopped; JSON over HTTP
  daemon     interactived under test: its environment, READY=1, the local API
  callgrind  instruction counts of a process under valgrind --tool=callgrind
  measures   measurements more than one script reports: RSS joined with a viewer logged in,
             end-to-end latency (e2e.py), instructions per tracked overlay
"""
