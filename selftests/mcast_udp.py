#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""UDP multicast helper for the selftests.

recv GROUP PORT IFNAME SECONDS [--no-join] [--count N]
                                            print "rx" per datagram (until
                                            N arrived, if given)
send GROUP PORT IFNAME COUNT                send COUNT datagrams
sniff GROUP PORT IFNAME SECONDS [--count N] print "rx" per UDP datagram
                                            to GROUP:PORT (IPv4 or IPv6) the
                                            interface receives, joined or
                                            not (a packet socket)
"""
import socket
import struct
import sys
import time


def ifindex(name):
    return socket.if_nametoindex(name)


def recv(group, port, ifname, seconds, join=True, count=0):
    v6 = ':' in group
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('::' if v6 else '0.0.0.0', port))
    if join:
        if v6:
            mreq = socket.inet_pton(fam, group) + struct.pack('@I', ifindex(ifname))
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, mreq)
        else:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifname.encode())
            mreq = struct.pack('4s4si', socket.inet_aton(group),
                               socket.inet_aton('0.0.0.0'), ifindex(ifname))
            s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
    count_rx(s, seconds, count, lambda pkt, addr: True)


def count_rx(s, seconds, count, wanted):
    """Print "rx" per datagram wanted(data, addr) takes, until count or the time."""
    print('ready', flush=True)
    end = time.time() + seconds
    got = 0
    while time.time() < end and (not count or got < count):
        s.settimeout(max(0.1, end - time.time()))
        try:
            pkt, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        if wanted(pkt, addr):
            got += 1
            print('rx', flush=True)


def send(group, port, ifname, count):
    v6 = ':' in group
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if v6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, ifindex(ifname))
    else:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifname.encode())
    for i in range(count):
        s.sendto(b'ipoib multicast %d' % i, (group, port))
        time.sleep(0.05)  # pacing


def sniff(group, port, ifname, seconds, count=0):
    v6 = ':' in group
    proto = 0x86DD if v6 else 0x0800
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(proto))
    s.bind((ifname, 0))
    want = socket.inet_pton(socket.AF_INET6 if v6 else socket.AF_INET, group)

    def wanted(pkt, addr):
        # incoming only (not PACKET_OUTGOING), UDP, to the group and port
        # (IPv6: UDP right after the fixed header, as the senders here send)
        if v6:
            hl, nh, dst = 40, pkt[6:7], pkt[24:40]
        else:
            hl, nh, dst = (pkt[0] & 15) * 4 if pkt else 0, pkt[9:10], pkt[16:20]
        return (addr[2] != socket.PACKET_OUTGOING and len(pkt) >= hl + 4 and
                nh == b'\x11' and dst == want and
                struct.unpack('!H', pkt[hl + 2:hl + 4])[0] == port)

    count_rx(s, seconds, count, wanted)

if __name__ == '__main__':
    cmd, group, port, ifname, arg = sys.argv[1:6]
    n = sys.argv.index('--count') + 1 if '--count' in sys.argv else 0
    if n and n >= len(sys.argv):
        sys.exit('--count needs a number')
    if cmd == 'recv':
        recv(group, int(port), ifname, float(arg),
             '--no-join' not in sys.argv, int(sys.argv[n]) if n else 0)
    elif cmd == 'sniff':
        sniff(group, int(port), ifname, float(arg), int(sys.argv[n]) if n else 0)
    else:
        send(group, int(port), ifname, int(arg))
