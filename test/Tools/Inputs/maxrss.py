"""Runs a command and prints its peak resident memory in MiB (the child's
ru_maxrss): maxrss.py COMMAND ARGS... Exit status: the command's."""
import resource
import subprocess
import sys

rc = subprocess.call(sys.argv[1:])
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"peak RSS {peak:.0f} MiB")
sys.exit(rc)
