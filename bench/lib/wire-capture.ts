import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Downlink jitter measured on the wire: tcpdump on the loopback interface records every RTP
 * packet with the kernel's timestamp, taken as the sending thread hands the datagram to the
 * network stack. A client peer written in Node measures arrival in its own event loop, after
 * its own SRTP and RTP handling, so its figure also holds the client's pauses; a browser stamps
 * packets on its network thread as they arrive, which is close to this. SRTP leaves the RTP
 * header in the clear, so sequence numbers and marker bits are readable without keys.
 */
export interface WirePacket {
  /** Kernel timestamp, ms. */
  at: number;
  srcPort: number;
  dstPort: number;
  payloadType: number;
  marker: boolean;
}

/** tcpdump present and allowed to capture on lo (root or CAP_NET_RAW). */
export function wireCaptureAvailable(): boolean {
  if (spawnSync('tcpdump', ['--version']).status !== 0) return false;
  const probe = spawnSync('tcpdump', ['-i', 'lo', '-c', '1', '-w', '/dev/null', 'udp port 9'], { timeout: 1500 });
  // Killed by the timeout = it was capturing (waiting for a packet); a refusal exits at once.
  return probe.status === 0 || probe.signal === 'SIGTERM';
}

/**
 * How downlink jitter is counted, at the client peers and on the wire alike: a gap over
 * SPURT_GAP_MS opens a talk spurt and its first LEAD_PACKETS (the pacer's burst) are not counted.
 */
export const SPURT_GAP_MS = 150;
export const LEAD_PACKETS = 4;

export class WireCapture {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    private readonly exited: Promise<void>,
  ) {}

  /** Starts capturing RTP (version 2, not RTCP) on lo; `cpu` pins tcpdump to one CPU. */
  static async start(cpu?: number): Promise<WireCapture> {
    const dir = mkdtempSync(join(tmpdir(), 'parley-wire-'));
    // Headers only (Ethernet 14 + IPv4 20 + UDP 8 + RTP 12); RTCP (payload types 200–207 with
    // the marker bit position set) is left out by the filter.
    const args = ['-i', 'lo', '-n', '-s', '64', '-B', '32768', '-w', join(dir, 'rtp.pcap'), 'udp and (udp[8] & 0xc0) = 0x80 and not (udp[9] >= 200 and udp[9] <= 207)'];
    const child = cpu === undefined ? spawn('tcpdump', args, { stdio: ['ignore', 'ignore', 'pipe'] }) : spawn('taskset', ['-c', String(cpu), 'tcpdump', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    await new Promise<void>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`tcpdump did not start: ${err}`)), 5000);
      child.stderr?.on('data', (chunk: Buffer) => {
        err += String(chunk);
        if (err.includes('listening on')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`tcpdump exited (${code}): ${err}`));
      });
    });
    return new WireCapture(child, dir, exited);
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /** Stops the capture and returns its packets. */
  async stop(): Promise<WirePacket[]> {
    this.child.kill('SIGINT');
    await this.exited;
    try {
      return parsePcap(readFileSync(join(this.dir, 'rtp.pcap')));
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/** Classic pcap (microsecond, little- or big-endian), link type Ethernet (Linux lo) or raw IP. */
export function parsePcap(file: Buffer): WirePacket[] {
  if (file.length < 24) return [];
  const magic = file.readUInt32LE(0);
  const le = magic === 0xa1b2c3d4 || magic === 0xa1b23c4d;
  const nano = magic === 0xa1b23c4d || magic === 0x4d3cb2a1;
  const u32 = (o: number): number => (le ? file.readUInt32LE(o) : file.readUInt32BE(o));
  const linkType = u32(20);
  const linkHeader = linkType === 1 ? 14 : linkType === 101 ? 0 : linkType === 113 ? 16 : -1;
  if (linkHeader < 0) throw new Error(`pcap link type ${linkType} not handled`);
  const out: WirePacket[] = [];
  for (let o = 24; o + 16 <= file.length; ) {
    const sec = u32(o);
    const frac = u32(o + 4);
    const caplen = u32(o + 8);
    const p = o + 16;
    o = p + caplen;
    const ip = p + linkHeader;
    if ((file[ip]! >> 4) !== 4) continue;
    const udp = ip + (file[ip]! & 0x0f) * 4;
    const rtp = udp + 8;
    if (rtp + 2 > p + caplen) continue;
    out.push({
      at: sec * 1000 + (nano ? frac / 1e6 : frac / 1e3),
      srcPort: file.readUInt16BE(udp),
      dstPort: file.readUInt16BE(udp + 2),
      payloadType: file[rtp + 1]! & 0x7f,
      marker: (file[rtp + 1]! & 0x80) !== 0,
    });
  }
  return out;
}

/** UDP ports bound by one process (its sockets in /proc/<pid>/fd matched to /proc/net/udp). */
export function udpPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  const fdDir = `/proc/${pid}/fd`;
  for (const fd of readdirSync(fdDir)) {
    try {
      const target = readlinkSync(join(fdDir, fd));
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m?.[1]) inodes.add(m[1]);
    } catch {
      // The descriptor closed meanwhile.
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/udp', '/proc/net/udp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || !inodes.has(cols[9]!)) continue;
      ports.add(parseInt(cols[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

/**
 * |inter-departure − 20 ms| of the packets each server port sends to each client port, with the
 * client peers' own rules: a gap over `spurtGapMs` opens a talk spurt, its first `leadPackets`
 * are its burst and not counted.
 */
export function wireDeviations(packets: readonly WirePacket[], serverPorts: ReadonlySet<number>, spurtGapMs: number, leadPackets: number): { deviations: number[]; packets: number; flows: number } {
  const flows = new Map<string, { last: number; inSpurt: number }>();
  const deviations: number[] = [];
  let count = 0;
  for (const pkt of packets) {
    if (!serverPorts.has(pkt.srcPort)) continue;
    count += 1;
    const key = `${pkt.srcPort}>${pkt.dstPort}`;
    const flow = flows.get(key);
    if (!flow) {
      flows.set(key, { last: pkt.at, inSpurt: 1 });
      continue;
    }
    const gap = pkt.at - flow.last;
    flow.last = pkt.at;
    flow.inSpurt = gap > spurtGapMs ? 1 : flow.inSpurt + 1;
    if (flow.inSpurt > leadPackets) deviations.push(Math.abs(gap - 20));
  }
  return { deviations, packets: count, flows: flows.size };
}
