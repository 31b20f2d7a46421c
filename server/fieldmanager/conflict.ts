// Apply conflicts: fields another manager owns with a different value. The 409 names every
// field and its owner as kube-apiserver does, e.g.
//   Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas
// with one `FieldManagerConflict` cause per field.

import { StatusError } from '../machinery/status.js';
import { goQuote } from '../machinery/validation/field-error.js';
import { parseManagerId } from './managed.js';
import { pathString, type Path } from './path.js';
import { compareStrings } from './value.js';

export interface Conflict {
  /** manager identity */
  readonly manager: string;
  readonly path: Path;
}

export class ApplyConflicts extends Error {
  constructor(readonly conflicts: Conflict[]) {
    super(`${conflicts.length} apply conflicts`);
  }
}

/** `"name"`, `"name" with subresource "status"`, plus ` using v1` for Update managers */
export function printManager(id: string): string {
  const info = parseManagerId(id);
  let s = goQuote(info.manager);
  if (info.subresource) s += ` with subresource ${goQuote(info.subresource)}`;
  if (info.operation === 'Update') s += ` using ${info.apiVersion}`;
  return s;
}

export function conflictMessage(conflicts: readonly Conflict[]): string {
  if (conflicts.length === 1) {
    const [c] = conflicts;
    return `Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${pathString(c.path)}`;
  }
  const byManager = new Map<string, Path[]>();
  for (const c of conflicts) {
    const list = byManager.get(c.manager) ?? [];
    list.push(c.path);
    byManager.set(c.manager, list);
  }
  const lines: string[] = [];
  for (const manager of [...byManager.keys()].sort(compareStrings)) {
    lines.push(`conflicts with ${printManager(manager)}:`);
    for (const p of byManager.get(manager)!) lines.push(`- ${pathString(p)}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

export function conflictError(conflicts: readonly Conflict[]): StatusError {
  const causes = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: pathString(c.path),
  }));
  return new StatusError(409, 'Conflict', conflictMessage(conflicts), { causes });
}
