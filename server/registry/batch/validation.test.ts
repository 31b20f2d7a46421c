// batch/v1 defaulting and validation against what kube-apiserver 1.33 answers, and the cron
// schedule parser's messages (robfig/cron's).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../storage/interface.js';
import { cause, fixedUid, kind } from '../testing/strategies.js';
import { cronScheduleError } from './cron.js';

const jobs = kind('batch', 'v1', 'jobs');
const cronjobs = kind('batch', 'v1', 'cronjobs');

const podSpec = (restartPolicy?: string) => ({
  ...(restartPolicy ? { restartPolicy } : {}),
  containers: [{ name: 'c', image: 'busybox' }],
});

function job(spec: Record<string, unknown>, name = 'pi'): KubeObject {
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec };
}

function cronJob(spec: Record<string, unknown>, name = 'hello'): KubeObject {
  return { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name }, spec };
}

test('Job defaults and the generated selector', () => {
  const out = jobs.defaulted(job({ template: { spec: podSpec('Never') } }));
  const spec = out.spec as Record<string, any>;
  assert.deepEqual(Object.keys(spec), [
    'parallelism',
    'completions',
    'backoffLimit',
    'selector',
    'manualSelector',
    'template',
    'completionMode',
    'suspend',
    'podReplacementPolicy',
  ]);
  assert.equal(spec.parallelism, 1);
  assert.equal(spec.completions, 1);
  assert.equal(spec.backoffLimit, 6);
  assert.equal(spec.manualSelector, false);
  assert.equal(spec.completionMode, 'NonIndexed');
  assert.equal(spec.suspend, false);
  assert.equal(spec.podReplacementPolicy, 'TerminatingOrFailed');
  assert.deepEqual(spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': fixedUid } });
  assert.deepEqual(spec.template.metadata.labels, {
    'batch.kubernetes.io/controller-uid': fixedUid,
    'batch.kubernetes.io/job-name': 'pi',
    'controller-uid': fixedUid,
    'job-name': 'pi',
  });
  const withPolicy = jobs.defaulted(
    job({
      parallelism: 3,
      template: { spec: podSpec('Never') },
      podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
    }),
  ).spec as Record<string, any>;
  assert.equal(withPolicy.completions, undefined);
  assert.equal(withPolicy.podReplacementPolicy, 'Failed');
  assert.deepEqual(withPolicy.podFailurePolicy.rules[0].onPodConditions, [{ type: 'DisruptionTarget', status: 'True' }]);
});

test('invalid Jobs', () => {
  assert.deepEqual(jobs.createCauses(job({ template: { spec: podSpec() } })), [
    cause('FieldValueRequired', 'spec.template.spec.restartPolicy', 'Required value: valid values: "OnFailure", "Never"'),
  ]);
  assert.deepEqual(
    jobs.createCauses(job({ parallelism: -1, backoffLimit: -2, completionMode: 'Sometimes', template: { spec: podSpec('Never') } })),
    [
      cause('FieldValueInvalid', 'spec.parallelism', 'Invalid value: -1: must be greater than or equal to 0'),
      cause('FieldValueInvalid', 'spec.backoffLimit', 'Invalid value: -2: must be greater than or equal to 0'),
      cause('FieldValueNotSupported', 'spec.completionMode', 'Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"'),
    ],
  );
  assert.deepEqual(
    jobs.createCauses(job({ completionMode: 'Indexed', completions: 2, template: { spec: podSpec('Never') } }, 'x'.repeat(62))),
    [
      cause(
        'FieldValueInvalid',
        'metadata.name',
        `Invalid value: "${'x'.repeat(62)}": will not able to create pod with invalid DNS label: ${'x'.repeat(62)}-1`,
      ),
    ],
  );
});

test('a Job template and selector are immutable', () => {
  const old = job({ template: { spec: podSpec('Never') } });
  const created = jobs.defaulted(old);
  const changed = structuredClone(created);
  (changed.spec as Record<string, any>).template.spec.containers[0].image = 'other';
  (changed.spec as Record<string, any>).parallelism = 2;
  assert.deepEqual(
    jobs.updateCauses(old, changed).map((c) => `${c.field}: ${c.reason}`),
    ['spec.template: FieldValueInvalid'],
  );
  const reselect = structuredClone(created);
  (reselect.spec as Record<string, any>).selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': fixedUid, extra: 'x' } };
  const causes = jobs.updateCauses(old, reselect);
  assert.ok(causes.some((c) => c.field === 'spec.selector' && /field is immutable$/.test(c.message ?? '')));
});

test('CronJob defaults: the job template gets pod template defaults only', () => {
  const out = cronjobs.defaulted(cronJob({ schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: podSpec('OnFailure') } } } }));
  const spec = out.spec as Record<string, any>;
  assert.deepEqual(Object.keys(spec), [
    'schedule',
    'concurrencyPolicy',
    'suspend',
    'jobTemplate',
    'successfulJobsHistoryLimit',
    'failedJobsHistoryLimit',
  ]);
  assert.equal(spec.concurrencyPolicy, 'Allow');
  assert.equal(spec.suspend, false);
  assert.equal(spec.successfulJobsHistoryLimit, 3);
  assert.equal(spec.failedJobsHistoryLimit, 1);
  assert.deepEqual(spec.jobTemplate.metadata, { creationTimestamp: null });
  assert.deepEqual(Object.keys(spec.jobTemplate.spec), ['template']);
  assert.equal(spec.jobTemplate.spec.template.spec.dnsPolicy, 'ClusterFirst');
});

test('invalid CronJobs', () => {
  const jt = { spec: { template: { spec: podSpec('OnFailure') } } };
  assert.deepEqual(cronjobs.createCauses(cronJob({ schedule: '61 * * * *', jobTemplate: jt })), [
    cause('FieldValueInvalid', 'spec.schedule', 'Invalid value: "61 * * * *": end of range (61) above maximum (59): 61'),
  ]);
  assert.deepEqual(
    cronjobs.createCauses(cronJob({ schedule: '', concurrencyPolicy: 'Sometimes', jobTemplate: jt, timeZone: 'Mars/Olympus' })),
    [
      cause('FieldValueRequired', 'spec.schedule', 'Required value'),
      cause('FieldValueInvalid', 'spec.timeZone', 'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'),
      cause(
        'FieldValueNotSupported',
        'spec.concurrencyPolicy',
        'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
      ),
    ],
  );
  assert.deepEqual(
    cronjobs.createCauses(
      cronJob({
        schedule: 'TZ=UTC * * * * * *',
        jobTemplate: { spec: { selector: { matchLabels: { a: 'b' } }, template: { spec: podSpec('Always') } } },
      }),
    ),
    [
      cause('FieldValueInvalid', 'spec.schedule', 'Invalid value: "TZ=UTC * * * * * *": expected exactly 5 fields, found 6: [* * * * * *]'),
      cause(
        'FieldValueInvalid',
        'spec.schedule',
        'Invalid value: "TZ=UTC * * * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
      ),
      cause(
        'FieldValueRequired',
        'spec.jobTemplate.spec.template.spec.restartPolicy',
        'Required value: valid values: "OnFailure", "Never"',
      ),
      cause(
        'FieldValueInvalid',
        'spec.jobTemplate.spec.selector',
        'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated',
      ),
    ],
  );
  assert.deepEqual(cronjobs.createCauses(cronJob({ schedule: '@daily', jobTemplate: jt }, 'x'.repeat(53))), [
    cause('FieldValueInvalid', 'metadata.name', `Invalid value: "${'x'.repeat(53)}": must be no more than 52 characters`),
  ]);
});

test('cron schedules as robfig/cron parses them', () => {
  for (const ok of [
    '* * * * *',
    '*/15 0-6 1,15 jan-mar MON-FRI',
    '0 0 * * 0',
    '@hourly',
    '@every 1h30m',
    'CRON_TZ=UTC 0 * * * *',
    '5/10 * * * ?',
  ]) {
    assert.equal(cronScheduleError(ok), undefined, ok);
  }
  assert.equal(cronScheduleError(''), 'empty spec string');
  assert.equal(cronScheduleError('* * *'), 'expected exactly 5 fields, found 3: [* * *]');
  assert.equal(cronScheduleError('x * * * *'), 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax');
  assert.equal(cronScheduleError('* 5-2 * * *'), 'beginning of range (5) beyond end of range (2): 5-2');
  assert.equal(cronScheduleError('* * 0 * *'), 'beginning of range (0) below minimum (1): 0');
  assert.equal(cronScheduleError('*/0 * * * *'), 'step of range should be a positive number: */0');
  assert.equal(cronScheduleError('1-2-3 * * * *'), 'too many hyphens: 1-2-3');
  assert.equal(cronScheduleError('@fortnightly'), 'unrecognized descriptor: @fortnightly');
  assert.equal(cronScheduleError('@every 5'), 'failed to parse duration @every 5: time: missing unit in duration "5"');
  assert.equal(cronScheduleError('TZ=Nowhere/Place 0 * * * *'), 'provided bad location Nowhere/Place: unknown time zone Nowhere/Place');
});
