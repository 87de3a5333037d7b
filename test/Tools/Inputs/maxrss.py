"""Runs a command and reports its peak resident memory (the child's
ru_maxrss) against a limit: maxrss.py LIMIT_MIB COMMAND ARGS... prints
"peak RSS below LIMIT MiB" or "peak RSS N MiB, over LIMIT MiB".
Exit status: the command's."""
import resource
import subprocess
import sys

limit = float(sys.argv[1])
rc = subprocess.call(sys.argv[2:])
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"peak RSS below {limit:.0f} MiB" if peak < limit
      else f"peak RSS {peak:.0f} MiB, over {limit:.0f} MiB")
sys.exit(rc)
