// The worker's own message to its primary (the audit and metrics protocols have theirs).

interface WorkerReady {
  kapiWorker: 'ready';
}

export const workerReady: WorkerReady = { kapiWorker: 'ready' };

export function isWorkerReady(m: unknown): m is WorkerReady {
  return typeof m === 'object' && m !== null && (m as Partial<WorkerReady>).kapiWorker === 'ready';
}
