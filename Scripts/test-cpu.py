#!/usr/bin/env python3
"""Where the test suite's CPU goes (#47): runs a command (by default `swift test --skip-build`),
samples /proc twice a second, and charges every process's CPU time (user + system) to the test
scratch directory its command line names (`$TMPDIR/ingestd-tests-<pid>/<name>`: one per test or
suite), to its parent's when it names none, else to its program. The test process's own CPU (the
in-process transcodes of `Fixtures`, the unit tests) is `test process`.

  Scripts/test-cpu.py [--top N] [-- COMMAND...]

Prints the wall time, the CPU seconds in all, the cores busy minute by minute, and the top N names
by CPU seconds. Processes alive before the command count from its start.
"""
import os
import re
import subprocess
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")
SCRATCH = re.compile(r"ingestd-tests-\d+(?:/|\\/)([A-Za-z0-9_.-]+)")


def snapshot():
    """{pid: (ppid, cpu seconds, command line)} of every live process."""
    seen = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if not cmdline.strip():  # a kernel thread, or a process gone before it was seen: its name, as ps shows it
            cmdline = "[" + stat[stat.index("(") + 1:stat.rindex(")")] + "]"
        seen[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS, cmdline)
    return seen


def program(cmdline):
    """A command's program name; a Python script's by the script's name."""
    if cmdline.startswith("["):  # a kernel thread: per-CPU workers as one ([kworker/1:1H-kblockd])
        return re.sub(r"/.*\]$", "]", cmdline)
    words = cmdline.split(" ")
    name = os.path.basename(words[0]) or "?"
    if name.startswith("python") and len(words) > 1 and words[1].endswith(".py"):
        name += " " + os.path.basename(words[1])
    return name


def main():
    args = sys.argv[1:]
    top = 30
    if args[:1] == ["--top"]:
        top, args = int(args[1]), args[2:]
    command = args[1:] if args[:1] == ["--"] else ["swift", "test", "--skip-build"]
    started = time.time()
    # What ran before the command started counts from here: a kernel thread's or a daemon's CPU
    # since boot is not the suite's.
    last = {pid: seconds for pid, (_, seconds, _) in snapshot().items()}
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL if "--quiet" in os.environ.get("TEST_CPU", "") else None)
    labels, cpu, per_minute = {}, {}, {}
    while True:
        processes = snapshot()
        for pid, (ppid, seconds, cmdline) in processes.items():
            if pid not in labels:
                match = SCRATCH.search(cmdline)
                if pid == child.pid or "xctest" in cmdline.split(" ")[0]:
                    labels[pid] = "test process"
                elif match:
                    labels[pid] = match.group(1)
                elif ppid in labels and labels[ppid] != "test process" and not cmdline.startswith("["):
                    labels[pid] = labels[ppid]
                else:
                    labels[pid] = program(cmdline)
            delta = max(0, seconds - last.get(pid, 0))
            last[pid] = seconds
            cpu[labels[pid]] = cpu.get(labels[pid], 0) + delta
            minute = int((time.time() - started) // 60)
            per_minute[minute] = per_minute.get(minute, 0) + delta
        for pid in set(last) - set(processes):
            last.pop(pid)  # a reused pid starts again from 0
            labels.pop(pid, None)
        if child.poll() is not None:
            break
        time.sleep(0.5)
    wall = time.time() - started
    total = sum(cpu.values())
    print(f"\nwall {wall:.0f} s, CPU {total:.0f} s (exit {child.returncode})")
    # Cores busy, minute by minute: where the run waits rather than computes.
    # The last minute is divided by the part of it that ran.
    minutes = range(int(wall // 60) + 1)
    print("cores busy per minute: " + " ".join(f"{per_minute.get(m, 0) / max(min(60, wall - 60 * m), 1):.1f}" for m in minutes))
    for name, seconds in sorted(cpu.items(), key=lambda item: -item[1])[:top]:
        print(f"{seconds:8.1f} s  {100 * seconds / total:5.1f} %  {name}")
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
