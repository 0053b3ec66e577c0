# SPDX-License-Identifier: GPL-2.0
"""Multicast at scale, for make bench (tools/bench/mscale.sh).

mscale.py join IFNAME N MCG         (B) join N IPv4 groups, a socket each;
                                    print the seconds until debugfs MCG
                                    shows them all joined (complete); take
                                    eth0 down and up and print the seconds
                                    from up until all are joined again and
                                    the RTNL probe's longest and median
                                    wait; then wait for stdin to close,
                                    leave them
                                    (close the sockets) and print the
                                    seconds that took, until they are gone,
                                    and the longest and median time an RTNL
                                    probe waited meanwhile
mscale.py send IFNAME N             (A) send a datagram to each of N groups
mscale.py probe SECONDS             the RTNL probe alone, idle: longest and
                                    median wait
The RTNL probe sets lo's MTU to what it is, which takes RTNL, every 10 ms.
"""
import resource
import socket
import struct
import subprocess
import sys
import threading
import time

BASE = "239.4"


def group(i):
    return "%s.%d.%d" % (BASE, i // 250, i % 250 + 1)


def mgid_count(mcg, joined=False):
    # IPv4 groups 239.4.x.y map to ff12:401b:ffff::f04:xxyy (RFC 4391
    # s4: the low 28 bits of the IPv4 group)
    with open(mcg) as f:
        return sum(1 for line in f if "::f04:" in line and
                   (not joined or "complete: yes" in line))


class Probe(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.waits = []
        self.stop = False

    def run(self):
        mtu = open("/sys/class/net/lo/mtu").read().strip()
        while not self.stop:
            t = time.monotonic()
            subprocess.run(["ip", "link", "set", "lo", "mtu", mtu],
                           check=True)
            self.waits.append(time.monotonic() - t)
            time.sleep(0.01)

    def result(self):
        w = sorted(self.waits) or [0]
        return "%.3f %.3f" % (w[-1], w[len(w) // 2])


def join(ifname, n, mcg):
    resource.setrlimit(resource.RLIMIT_NOFILE, (n + 64, n + 64))
    idx = socket.if_nametoindex(ifname)
    socks = []
    t0 = time.monotonic()
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        mreq = struct.pack("4s4si", socket.inet_aton(group(i)),
                           socket.inet_aton("0.0.0.0"), idx)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
        socks.append(s)
    while mgid_count(mcg, True) < n and time.monotonic() - t0 < 60:
        time.sleep(0.01)
    print("joined %d %.3f" % (mgid_count(mcg, True), time.monotonic() - t0),
          flush=True)
    # the underlay down and up: every group joined again, RTNL meanwhile
    probe = Probe()
    probe.start()
    subprocess.run(["ip", "link", "set", "eth0", "down"], check=True)
    while mgid_count(mcg, True) and time.monotonic() - t0 < 60:
        time.sleep(0.01)
    time.sleep(0.3)
    t0 = time.monotonic()
    subprocess.run(["ip", "link", "set", "eth0", "up"], check=True)
    while mgid_count(mcg, True) < n and time.monotonic() - t0 < 60:
        time.sleep(0.01)
    t1 = time.monotonic() - t0
    time.sleep(0.1)
    probe.stop = True
    probe.join()
    print("rejoined %d %.3f %s" % (mgid_count(mcg, True), t1,
                                   probe.result()), flush=True)
    sys.stdin.read()
    probe = Probe()
    probe.start()
    time.sleep(0.2)
    t0 = time.monotonic()
    for s in socks:
        s.close()
    closed = time.monotonic() - t0
    while mgid_count(mcg) and time.monotonic() - t0 < 60:
        time.sleep(0.01)
    gone = time.monotonic() - t0
    time.sleep(0.1)
    probe.stop = True
    probe.join()
    print("left %d %.3f %.3f %s" % (mgid_count(mcg), closed, gone,
                                    probe.result()), flush=True)


def send(ifname, n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifname.encode())
    for i in range(n):
        s.sendto(b"x", (group(i), 5000))


def probe_idle(seconds):
    probe = Probe()
    probe.start()
    time.sleep(seconds)
    probe.stop = True
    probe.join()
    print(probe.result())


def main():
    if sys.argv[1] == "join":
        join(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]))
    else:
        probe_idle(float(sys.argv[2]))


if __name__ == "__main__":
    main()
