// Which requests are long-running, as kube-apiserver decides it: watches and proxies by verb,
// attach/exec/log/portforward/proxy by subresource, and the profiler's streams. Long-running
// requests are exempt from the request timeout and from the in-flight accounting of shutdown.

import type { RequestInfo } from '../../request/request-info.js';

const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

export function isLongRunning(info: RequestInfo): boolean {
  if (LONG_RUNNING_VERBS.has(info.verb)) return true;
  if (info.isResourceRequest) return LONG_RUNNING_SUBRESOURCES.has(info.subresource);
  // kube's profiling handlers under debug/pprof/ stream for as long as they are asked to
  const segments = info.path.split('/');
  return segments.length > 3 && segments[0] === '' && segments[1] === 'debug' && segments[2] === 'pprof';
}
