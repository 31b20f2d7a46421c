// What haproxy thinks of each replica, read from its stats socket (`show stat`): whether the
// health checks have it UP or DOWN, and how many connections it has been given.

import net from 'node:net';
import { haproxySocket } from './cluster.js';

export interface BackendServerState {
  /** the replica's name (kapi-0, ...) */
  name: string;
  /** UP, DOWN, "DOWN 1/2", "UP 1/2" (going down/up), MAINT, no check */
  status: string;
  /** connections haproxy has sent it in total */
  sessionsTotal: number;
}

function command(socketPath: string, cmd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(socketPath);
    let out = '';
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.end(`${cmd}\n`));
    sock.on('data', (d: string) => (out += d));
    sock.on('end', () => resolve(out));
    sock.on('error', reject);
  });
}

/** The replicas behind the load balancer of the local cluster in `dir`. */
export async function backendServers(dir: string): Promise<BackendServerState[]> {
  const csv = await command(haproxySocket(dir), 'show stat');
  const lines = csv.split('\n').filter((l) => l.trim() !== '');
  const header = lines[0]?.replace(/^#\s*/, '').split(',') ?? [];
  const col = (name: string): number => {
    const i = header.indexOf(name);
    if (i < 0) throw new Error(`haproxy show stat has no ${name} column: ${lines[0]}`);
    return i;
  };
  const [px, sv, status, stot] = [col('pxname'), col('svname'), col('status'), col('stot')];
  return lines
    .slice(1)
    .map((l) => l.split(','))
    .filter((f) => f[px] === 'kapi_replicas' && f[sv] !== 'BACKEND' && f[sv] !== 'FRONTEND')
    .map((f) => ({ name: f[sv]!, status: f[status]!, sessionsTotal: Number(f[stot]) }));
}
