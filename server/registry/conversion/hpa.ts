// autoscaling/v1 <-> autoscaling/v2 HorizontalPodAutoscaler. v2 is stored. v1 only knows a
// CPU utilization target; everything else v2 can say travels in annotations
// (autoscaling.alpha.kubernetes.io/*), as kube-apiserver does, so a v1 read-modify-write
// keeps the v2-only parts.

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, isObject, reorder, type JsonObject } from '../object.js';

export const metricSpecsAnnotation = 'autoscaling.alpha.kubernetes.io/metrics';
export const metricStatusesAnnotation = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const conditionsAnnotation = 'autoscaling.alpha.kubernetes.io/conditions';
export const behaviorAnnotation = 'autoscaling.alpha.kubernetes.io/behavior';
const roundTripAnnotations = [metricSpecsAnnotation, metricStatusesAnnotation, conditionsAnnotation, behaviorAnnotation];

type J = JsonObject;

function defined(o: J): J {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

function parseJsonList(s: string | undefined): J[] | undefined {
  if (s === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(s);
    return Array.isArray(v) ? v.filter(isObject) : undefined;
  } catch {
    return undefined;
  }
}

function parseJsonObject(s: string | undefined): J | undefined {
  if (s === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(s);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

// ---- v1 annotation shapes (the old v2beta1 field names) <-> v2 ----

function targetToV2(kind: 'value' | 'averageValue' | 'averageUtilization', v: unknown): J {
  if (kind === 'averageUtilization') return { type: 'Utilization', averageUtilization: v };
  if (kind === 'averageValue') return { type: 'AverageValue', averageValue: v };
  return { type: 'Value', value: v };
}

function metricSpecV1ToV2(m: J): J {
  const out: J = { type: m.type };
  const o = asObject(m.object);
  const p = asObject(m.pods);
  const r = asObject(m.resource);
  const c = asObject(m.containerResource);
  const e = asObject(m.external);
  if (isObject(m.object)) {
    out.object = defined({
      describedObject: o.target,
      target: o.averageValue !== undefined ? targetToV2('averageValue', o.averageValue) : targetToV2('value', o.targetValue),
      metric: defined({ name: o.metricName, selector: o.selector }),
    });
  }
  if (isObject(m.pods)) {
    out.pods = { metric: defined({ name: p.metricName, selector: p.selector }), target: targetToV2('averageValue', p.targetAverageValue) };
  }
  for (const [src, key] of [
    [r, 'resource'],
    [c, 'containerResource'],
  ] as const) {
    if (!isObject(m[key])) continue;
    const target =
      src.targetAverageUtilization !== undefined
        ? targetToV2('averageUtilization', src.targetAverageUtilization)
        : targetToV2('averageValue', src.targetAverageValue);
    out[key] = key === 'resource' ? { name: src.name, target } : defined({ name: src.name, target, container: src.container });
  }
  if (isObject(m.external)) {
    out.external = {
      metric: defined({ name: e.metricName, selector: e.metricSelector }),
      target: e.targetAverageValue !== undefined ? targetToV2('averageValue', e.targetAverageValue) : targetToV2('value', e.targetValue),
    };
  }
  return out;
}

function metricSpecV2ToV1(m: J): J {
  const out: J = { type: m.type };
  const t = (x: J) => asObject(x.target);
  if (isObject(m.object)) {
    const o = m.object;
    const metric = asObject(o.metric);
    out.object = defined({
      target: o.describedObject ?? {},
      metricName: metric.name ?? '',
      targetValue: t(o).value ?? '0',
      selector: metric.selector,
      averageValue: t(o).averageValue,
    });
  }
  if (isObject(m.pods)) {
    const p = m.pods;
    const metric = asObject(p.metric);
    out.pods = defined({ metricName: metric.name ?? '', targetAverageValue: t(p).averageValue ?? '0', selector: metric.selector });
  }
  for (const key of ['resource', 'containerResource'] as const) {
    if (!isObject(m[key])) continue;
    const r = m[key] as J;
    out[key] = defined({
      name: r.name ?? '',
      targetAverageUtilization: t(r).averageUtilization,
      targetAverageValue: t(r).averageValue,
      container: key === 'containerResource' ? (r.container ?? '') : undefined,
    });
  }
  if (isObject(m.external)) {
    const e = m.external;
    const metric = asObject(e.metric);
    out.external = defined({
      metricName: metric.name ?? '',
      metricSelector: metric.selector,
      targetValue: t(e).value,
      targetAverageValue: t(e).averageValue,
    });
  }
  return out;
}

function metricStatusV1ToV2(m: J): J {
  const out: J = { type: m.type };
  if (isObject(m.object)) {
    const o = m.object;
    out.object = defined({
      metric: defined({ name: o.metricName, selector: o.selector }),
      current: defined({ value: o.currentValue, averageValue: o.averageValue }),
      describedObject: o.target,
    });
  }
  if (isObject(m.pods)) {
    const p = m.pods;
    out.pods = { metric: defined({ name: p.metricName, selector: p.selector }), current: defined({ averageValue: p.currentAverageValue }) };
  }
  for (const key of ['resource', 'containerResource'] as const) {
    if (!isObject(m[key])) continue;
    const r = m[key] as J;
    const current = defined({ averageValue: r.currentAverageValue, averageUtilization: r.currentAverageUtilization });
    out[key] = key === 'resource' ? { name: r.name, current } : defined({ name: r.name, current, container: r.container });
  }
  if (isObject(m.external)) {
    const e = m.external;
    out.external = {
      metric: defined({ name: e.metricName, selector: e.metricSelector }),
      current: defined({ value: e.currentValue, averageValue: e.currentAverageValue }),
    };
  }
  return out;
}

function metricStatusV2ToV1(m: J): J {
  const out: J = { type: m.type };
  const cur = (x: J) => asObject(x.current);
  if (isObject(m.object)) {
    const o = m.object;
    const metric = asObject(o.metric);
    out.object = defined({
      target: o.describedObject ?? {},
      metricName: metric.name ?? '',
      currentValue: cur(o).value ?? '0',
      selector: metric.selector,
      averageValue: cur(o).averageValue,
    });
  }
  if (isObject(m.pods)) {
    const p = m.pods;
    const metric = asObject(p.metric);
    out.pods = defined({ metricName: metric.name ?? '', currentAverageValue: cur(p).averageValue ?? '0', selector: metric.selector });
  }
  for (const key of ['resource', 'containerResource'] as const) {
    if (!isObject(m[key])) continue;
    const r = m[key] as J;
    out[key] = defined({
      name: r.name ?? '',
      currentAverageUtilization: cur(r).averageUtilization,
      currentAverageValue: cur(r).averageValue ?? '0',
      container: key === 'containerResource' ? (r.container ?? '') : undefined,
    });
  }
  if (isObject(m.external)) {
    const e = m.external;
    const metric = asObject(e.metric);
    out.external = defined({
      metricName: metric.name ?? '',
      metricSelector: metric.selector,
      currentValue: cur(e).value ?? '0',
      currentAverageValue: cur(e).averageValue,
    });
  }
  return out;
}

function isCpuUtilizationTarget(m: J): boolean {
  const r = asObject(m.resource);
  return m.type === 'Resource' && isObject(m.resource) && r.name === 'cpu' && asObject(r.target).averageUtilization !== undefined;
}

// The behavior annotation carries kube-apiserver's internal type, whose JSON keys are the Go
// field names (ScaleUp, Policies, ...); reading accepts either spelling, like Go's decoder.

function rulesToAnnotation(r: unknown): J | null {
  if (!isObject(r)) return null;
  return {
    StabilizationWindowSeconds: r.stabilizationWindowSeconds ?? null,
    SelectPolicy: r.selectPolicy ?? null,
    Policies: Array.isArray(r.policies)
      ? r.policies.filter(isObject).map((p) => ({ Type: p.type ?? '', Value: p.value ?? 0, PeriodSeconds: p.periodSeconds ?? 0 }))
      : null,
    Tolerance: r.tolerance ?? null,
  };
}

function pick(o: J, name: string): unknown {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(o)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

function rulesFromAnnotation(r: unknown): J | undefined {
  if (!isObject(r)) return undefined;
  const policies = pick(r, 'policies');
  return defined({
    stabilizationWindowSeconds: pick(r, 'stabilizationWindowSeconds') ?? undefined,
    selectPolicy: pick(r, 'selectPolicy') ?? undefined,
    policies: Array.isArray(policies)
      ? policies.filter(isObject).map((p) => ({ type: pick(p, 'type'), value: pick(p, 'value'), periodSeconds: pick(p, 'periodSeconds') }))
      : undefined,
    tolerance: pick(r, 'tolerance') ?? undefined,
  });
}

// ---- the object conversions ----

const hpaV2SpecOrder = ['scaleTargetRef', 'minReplicas', 'maxReplicas', 'metrics', 'behavior'];
const hpaV2StatusOrder = ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas', 'currentMetrics', 'conditions'];
const hpaV1SpecOrder = ['scaleTargetRef', 'minReplicas', 'maxReplicas', 'targetCPUUtilizationPercentage'];
const hpaV1StatusOrder = ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas', 'currentCPUUtilizationPercentage'];

export function hpaV1ToV2(obj: KubeObject): KubeObject {
  const spec = asObject(obj.spec);
  const status = asObject(obj.status);
  const annotations = { ...(obj.metadata.annotations ?? {}) };

  const metrics: J[] = [];
  const others = parseJsonList(annotations[metricSpecsAnnotation]);
  if (others) metrics.push(...others.map(metricSpecV1ToV2));
  if (typeof spec.targetCPUUtilizationPercentage === 'number') {
    metrics.push({
      type: 'Resource',
      resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } },
    });
  }
  const newSpec: J = { ...spec };
  delete newSpec.targetCPUUtilizationPercentage;
  if (metrics.length) newSpec.metrics = metrics;
  const behavior = parseJsonObject(annotations[behaviorAnnotation]);
  if (behavior) {
    const b = defined({
      scaleUp: rulesFromAnnotation(pick(behavior, 'scaleUp')),
      scaleDown: rulesFromAnnotation(pick(behavior, 'scaleDown')),
    });
    if (Object.keys(b).length) newSpec.behavior = b;
  }

  const newStatus: J = { ...status };
  delete newStatus.currentCPUUtilizationPercentage;
  const current = parseJsonList(annotations[metricStatusesAnnotation]);
  if (current) {
    newStatus.currentMetrics = current.map(metricStatusV1ToV2);
  } else if (typeof status.currentCPUUtilizationPercentage === 'number') {
    newStatus.currentMetrics = [
      { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } },
    ];
  }
  const conditions = parseJsonList(annotations[conditionsAnnotation]);
  if (conditions) newStatus.conditions = conditions;

  for (const a of roundTripAnnotations) delete annotations[a];
  const meta = { ...obj.metadata };
  if (Object.keys(annotations).length) meta.annotations = annotations;
  else delete meta.annotations;

  const out: KubeObject = { ...obj, metadata: meta, spec: reorder(newSpec, hpaV2SpecOrder) };
  if (obj.status !== undefined) out.status = reorder(newStatus, hpaV2StatusOrder);
  return out;
}

export function hpaV2ToV1(obj: KubeObject): KubeObject {
  const spec = asObject(obj.spec);
  const status = asObject(obj.status);
  const annotations: Record<string, string> = { ...(obj.metadata.annotations ?? {}) };
  // only annotations this conversion produces may appear
  for (const a of roundTripAnnotations) delete annotations[a];

  const metrics = asArray(spec.metrics).filter(isObject);
  const newSpec: J = { scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas };
  const cpu = metrics.find((m) => m.type === 'Resource' && asObject(m.resource).name === 'cpu');
  const cpuTarget = cpu ? asObject(asObject(cpu.resource).target).averageUtilization : undefined;
  if (typeof cpuTarget === 'number') newSpec.targetCPUUtilizationPercentage = cpuTarget;
  const others = metrics.filter((m) => !isCpuUtilizationTarget(m)).map(metricSpecV2ToV1);
  if (others.length) annotations[metricSpecsAnnotation] = JSON.stringify(others);

  const currentMetrics = asArray(status.currentMetrics).filter(isObject);
  const newStatus: J = {
    observedGeneration: status.observedGeneration,
    lastScaleTime: status.lastScaleTime,
    // both are serialized even when zero in v1
    currentReplicas: status.currentReplicas ?? 0,
    desiredReplicas: status.desiredReplicas ?? 0,
  };
  for (const m of currentMetrics) {
    const r = asObject(m.resource);
    if (m.type === 'Resource' && r.name === 'cpu' && asObject(r.current).averageUtilization !== undefined) {
      newStatus.currentCPUUtilizationPercentage = asObject(r.current).averageUtilization;
    }
  }
  if (currentMetrics.length) annotations[metricStatusesAnnotation] = JSON.stringify(currentMetrics.map(metricStatusV2ToV1));
  if (isObject(spec.behavior)) {
    annotations[behaviorAnnotation] = JSON.stringify({
      ScaleUp: rulesToAnnotation(spec.behavior.scaleUp),
      ScaleDown: rulesToAnnotation(spec.behavior.scaleDown),
    });
  }
  const conditions = asArray(status.conditions);
  if (conditions.length) annotations[conditionsAnnotation] = JSON.stringify(conditions);

  const meta = { ...obj.metadata };
  if (Object.keys(annotations).length) meta.annotations = annotations;
  else delete meta.annotations;
  const out: KubeObject = { ...obj, metadata: meta, spec: reorder(defined(newSpec), hpaV1SpecOrder) };
  if (obj.status !== undefined) out.status = reorder(defined(newStatus), hpaV1StatusOrder);
  return out;
}
