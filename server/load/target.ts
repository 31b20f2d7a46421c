// The loopback guard that keeps a load test from hitting a real cluster by accident (where
// `kapi load` sends its requests is read from a kubeconfig by kubeconfig/read.ts).

import { isIP } from 'node:net';

/** 127.0.0.0/8, ::1, localhost: a load test there only hurts this machine */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h.startsWith('::ffff:127.');
  return false;
}
