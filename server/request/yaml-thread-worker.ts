// The thread that decodes large YAML bodies for yaml-thread.ts: one body at a time, with the
// same decoder the main thread uses. What the decoder refuses goes back as the Status it threw;
// anything else (which the main thread then decodes itself, to fail as it always did) as
// `failed`.

import { parentPort } from 'node:worker_threads';
import { StatusError } from '../machinery/status.js';
import { decodeYamlText } from './yaml.js';
import type { YamlThreadAnswer, YamlThreadJob } from './yaml-thread.js';

const port = parentPort;
if (port) {
  port.on('message', (job: YamlThreadJob) => {
    let answer: YamlThreadAnswer;
    try {
      const text = Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength).toString('utf8');
      answer = { id: job.id, decoded: decodeYamlText(text) };
    } catch (err) {
      answer =
        err instanceof StatusError && err.code === 400
          ? { id: job.id, refused: err.message }
          : { id: job.id, failed: (err as Error)?.message ?? String(err) };
    }
    try {
      port.postMessage(answer);
    } catch (err) {
      // a value the structured clone cannot carry: the main thread decodes this one itself
      port.postMessage({ id: job.id, failed: (err as Error).message } satisfies YamlThreadAnswer);
    }
  });
}
