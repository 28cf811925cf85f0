"""Where a process's threads spend a run: each thread's scheduler state, sampled from /proc.

    python3 benches/thread_states.py --out FILE [--rate HZ] -- COMMAND [ARGS...]

Runs COMMAND and, until it exits, reads /proc/PID/task/*/stat every 1/HZ s (default 200):
each thread's state (R running or runnable, S sleeping, D in uninterruptible wait) and, for
a sleeping one, its wchan (where the kernel parked it: a futex wait is a lock or a condition
variable, a poll or an ioctl a driver's wait). Per thread: its name, the CPU time it used
(utime + stime, in seconds) and its samples by state and by wchan, busiest thread first.
Only /proc is read (no perf, no ptrace), so it runs where a profiler cannot; what it sees is
where the threads are, not what code they run. TenSEAL's pool threads have no Python frame,
so py-spy (benches/tenseal_decompose.py) does not sample them: this does.
"""

import argparse
import json
import os
import subprocess
import sys
import time


def read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:  # the thread exited between listing and reading
        return ""


def thread_stat(pid: int, tid: str) -> tuple:
    """(name, state, CPU seconds) of one thread from /proc/PID/task/TID/stat; None if gone."""
    stat = read(f"/proc/{pid}/task/{tid}/stat")
    if not stat:
        return None
    # The name is in parentheses and may hold spaces: the fields after it are split.
    name = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2:].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return name, fields[0], (int(fields[11]) + int(fields[12])) / ticks


def sample(pid: int, threads: dict) -> None:
    """One sample of every thread of `pid` into `threads` (by TID)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        stat = thread_stat(pid, tid)
        if stat is None:
            continue
        name, state, cpu_s = stat
        t = threads.setdefault(tid, {"tid": int(tid), "name": name, "states": {}, "wchan": {}})
        t["cpu_s"] = cpu_s
        t["states"][state] = t["states"].get(state, 0) + 1
        if state != "R":
            wchan = read(f"/proc/{pid}/task/{tid}/wchan").strip() or "?"
            t["wchan"][wchan] = t["wchan"].get(wchan, 0) + 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    started = time.time()
    child = subprocess.Popen(command)
    threads = {}
    samples = 0
    while child.poll() is None:
        sample(child.pid, threads)
        samples += 1
        time.sleep(1.0 / args.rate)
    rows = sorted(threads.values(), key=lambda t: -t["cpu_s"])
    for t in rows:
        t["wchan"] = dict(sorted(t["wchan"].items(), key=lambda kv: -kv[1]))
    report = {
        "command": command,
        "returncode": child.returncode,
        "wall_s": round(time.time() - started, 3),
        "rate_hz": args.rate,
        "samples": samples,
        "threads": rows,
    }
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    for t in rows[:24]:
        top = ", ".join(f"{w} {n}" for w, n in list(t["wchan"].items())[:3])
        print(f"{t['tid']:>8} {t['name']:<16} cpu {t['cpu_s']:8.2f} s  {t['states']}  {top}")
    return child.returncode


if __name__ == "__main__":
    sys.exit(main())
