# SPDX-License-Identifier: GPL-2.0
"""Timeline of a guest's state for make bench's recovery figures.

watch.py OUT NAME=SOURCE...: every 2 ms, read each SOURCE and append
"EPOCH NAME VALUE" to OUT whenever its value changes, until killed.
A SOURCE is a file (its first line; "-" while it does not exist, e.g. an
interface being created again) or icmp:FIELD, that field of the Icmp line
of /proc/net/snmp (InEchos: echo requests this host received).
One process and one clock, so that what is compared was seen alike.
"""
import signal
import sys
import time


def snmp_icmp(field):
    with open("/proc/net/snmp") as f:
        rows = [line.split() for line in f if line.startswith("Icmp:")]
    return rows[1][rows[0].index(field)]


def read(source):
    try:
        if source.startswith("icmp:"):
            return snmp_icmp(source[5:])
        with open(source) as f:
            return f.readline().strip()
    except OSError:
        return "-"


def main():
    out = open(sys.argv[1], "a", buffering=1)
    sources = [arg.split("=", 1) for arg in sys.argv[2:]]
    last = {}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        for name, source in sources:
            value = read(source)
            if last.get(name) != value:
                last[name] = value
                out.write("%.6f %s %s\n" % (time.time(), name, value))
        time.sleep(0.002)


if __name__ == "__main__":
    main()
