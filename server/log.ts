// One line per event on stderr, in klog's shape so that people used to kube-apiserver's logs
// can read them: `I1122 01:40:00.123456  12345 component] message key="value"`.
// `-v N` raises verbosity; `log.v(2).info(...)` only prints at -v 2 and above.

export type LogFields = Record<string, string | number | boolean | undefined | null>;

export interface LeveledLogger {
  info(message: string, fields?: LogFields): void;
}

export interface Logger extends LeveledLogger {
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** a logger that prints only when verbosity >= level */
  v(level: number): LeveledLogger;
  /** the same logger with another component name */
  named(component: string): Logger;
}

let verbosity = 0;
let sink: (line: string) => void = (line) => process.stderr.write(line + '\n');

export function setVerbosity(level: number): void {
  verbosity = level;
}

export function getVerbosity(): number {
  return verbosity;
}

/** For tests: capture lines instead of writing them to stderr. Returns the previous sink. */
export function setLogSink(next: (line: string) => void): (line: string) => void {
  const prev = sink;
  sink = next;
  return prev;
}

function two(n: number): string {
  return n.toString().padStart(2, '0');
}

function formatValue(v: string | number | boolean | undefined | null): string {
  if (typeof v === 'string') return JSON.stringify(v);
  return String(v);
}

export function formatLine(severity: 'I' | 'W' | 'E', component: string, message: string, fields?: LogFields, now = new Date()): string {
  const stamp =
    `${two(now.getMonth() + 1)}${two(now.getDate())} ` +
    `${two(now.getHours())}:${two(now.getMinutes())}:${two(now.getSeconds())}.` +
    `${now.getMilliseconds().toString().padStart(3, '0')}000`;
  let line = `${severity}${stamp} ${process.pid.toString().padStart(7)} ${component}] ${message}`;
  if (fields) {
    for (const [k, v] of Object.entries(fields)) {
      if (v !== undefined) line += ` ${k}=${formatValue(v)}`;
    }
  }
  // one event, one line: a multi-line message (a stack) stays on one line
  return line.replace(/\n/g, '\\n');
}

const silent: LeveledLogger = { info: () => {} };

export function createLogger(component: string): Logger {
  const logger: Logger = {
    info: (m, f) => sink(formatLine('I', component, m, f)),
    warn: (m, f) => sink(formatLine('W', component, m, f)),
    error: (m, f) => sink(formatLine('E', component, m, f)),
    v: (level) => (verbosity >= level ? { info: logger.info } : silent),
    named: (other) => createLogger(other),
  };
  return logger;
}

export const log = createLogger('kapi');
