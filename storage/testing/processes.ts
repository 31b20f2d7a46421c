// What tests ask of the processes they started (always by PID).

import { readFileSync } from 'node:fs';

/** whether `pid` runs: signal 0 reaches it and it is not a zombie (which still answers
 *  signal 0; /proc tells it apart) */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
