import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { StatusError } from '../machinery/status.js';
import { invalidOptions } from './invalid-options.js';
import { readDeleteOptions, readListOptions, validateListOptions, validateWatchOptions, validateWriteOptions } from './options.js';

function statusOf(fn: () => unknown): { code: number; reason: string; message: string; details: unknown } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof StatusError, String(err));
    return { code: err.code, reason: err.reason, message: err.message, details: err.toStatus().details };
  }
  assert.fail('expected a Status error');
}

describe('write options (CreateOptions, UpdateOptions, PatchOptions)', () => {
  test('dryRun other than All is NotSupported, the values shown as a Go string slice', () => {
    const errs = validateWriteOptions(new URLSearchParams('dryRun=All&dryRun=Maybe'));
    const s = invalidOptions('CreateOptions', errs).toStatus();
    assert.equal(s.code, 422);
    assert.equal(s.reason, 'Invalid');
    assert.equal(
      s.message,
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"All", "Maybe"}: supported values: "All"',
    );
    assert.deepEqual(s.details, {
      group: 'meta.k8s.io',
      kind: 'CreateOptions',
      causes: [
        {
          reason: 'FieldValueNotSupported',
          message: 'Unsupported value: []string{"All", "Maybe"}: supported values: "All"',
          field: 'dryRun',
        },
      ],
    });
  });

  test('every invalid option is reported at once, in kube-apiserver order', () => {
    const errs = validateWriteOptions(new URLSearchParams('fieldValidation=Loose&dryRun=x&fieldManager=a%01'));
    assert.equal(
      invalidOptions('UpdateOptions', errs).message,
      'UpdateOptions.meta.k8s.io "" is invalid: [fieldManager: Invalid value: "a\\x01": invalid character U+0001 (at position 1), ' +
        'dryRun: Unsupported value: []string{"x"}: supported values: "All", ' +
        'fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"]',
    );
  });

  test('fieldManager: at most 128 bytes of UTF-8; every unprintable character is its own cause', () => {
    const long = validateWriteOptions(new URLSearchParams({ fieldManager: 'é'.repeat(65) }));
    assert.deepEqual(
      long.map((e) => [e.field, e.type]),
      [['fieldManager', 'FieldValueTooLong']],
    );
    assert.equal(
      invalidOptions('CreateOptions', long).message,
      'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
    );
    assert.deepEqual(validateWriteOptions(new URLSearchParams({ fieldManager: 'x'.repeat(128) })), []);

    const unprintable = invalidOptions(
      'CreateOptions',
      validateWriteOptions(new URLSearchParams({ fieldManager: 'é\tb\u0085' })),
    ).toStatus();
    assert.deepEqual(
      unprintable.details?.causes?.map((c) => c.message),
      [
        'Invalid value: "é\\tb\\u0085": invalid character U+0009 (at position 2)',
        'Invalid value: "é\\tb\\u0085": invalid character U+0085 (at position 4)',
      ],
    );
  });

  test('apply needs a fieldManager; force belongs to apply alone', () => {
    const apply = validateWriteOptions(new URLSearchParams('fieldManager='), { isApply: true });
    assert.equal(
      invalidOptions('PatchOptions', apply).message,
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
    const merge = validateWriteOptions(new URLSearchParams('force=true'), { isApply: false });
    assert.equal(
      invalidOptions('PatchOptions', merge).message,
      'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
    );
    assert.deepEqual(validateWriteOptions(new URLSearchParams('force=true&fieldManager=me'), { isApply: true }), []);
  });

  test('accepted values', () => {
    assert.deepEqual(
      validateWriteOptions(new URLSearchParams('dryRun=All&fieldValidation=Strict&fieldManager=kubectl-client-side-apply')),
      [],
    );
    assert.deepEqual(validateWriteOptions(new URLSearchParams('fieldValidation=')), []);
  });
});

describe('DeleteOptions', () => {
  test('an unknown propagationPolicy, and one set together with orphanDependents', () => {
    const unknown = statusOf(() => readDeleteOptions(new URLSearchParams('propagationPolicy=Sometimes'), undefined));
    assert.equal(unknown.code, 422);
    assert.equal(
      unknown.message,
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sometimes": supported values: "Foreground", "Background", "Orphan", "nil"',
    );
    const both = statusOf(() =>
      readDeleteOptions(new URLSearchParams('propagationPolicy=Orphan&orphanDependents=true&dryRun=Some'), undefined),
    );
    assert.deepEqual(both.details, {
      group: 'meta.k8s.io',
      kind: 'DeleteOptions',
      causes: [
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
          field: 'propagationPolicy',
        },
        { reason: 'FieldValueNotSupported', message: 'Unsupported value: []string{"Some"}: supported values: "All"', field: 'dryRun' },
      ],
    });
  });

  test('the same rules for options sent as a body', () => {
    const fromBody = statusOf(() => readDeleteOptions(new URLSearchParams(), { kind: 'DeleteOptions', propagationPolicy: 'Later' }));
    assert.equal(fromBody.code, 422);
    assert.equal(fromBody.reason, 'Invalid');
  });
});

describe('ListOptions', () => {
  test('list: resourceVersionMatch needs a resourceVersion; sendInitialEvents is for watches', () => {
    const exact = statusOf(() => validateListOptions(readListOptions(new URLSearchParams('resourceVersionMatch=Exact')), true));
    assert.equal(exact.code, 422);
    assert.equal(
      exact.message,
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    const initial = statusOf(() => validateListOptions(readListOptions(new URLSearchParams('sendInitialEvents=false')), true));
    assert.equal(
      initial.message,
      'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list',
    );
    const unknown = statusOf(() =>
      validateListOptions(readListOptions(new URLSearchParams('resourceVersion=1&resourceVersionMatch=Newest')), true),
    );
    assert.equal(
      unknown.message,
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
    );
  });

  test('watch: Exact is never allowed, and resourceVersionMatch needs sendInitialEvents', () => {
    const opts = readListOptions(new URLSearchParams('watch=1&resourceVersion=5&resourceVersionMatch=Exact'));
    const s = statusOf(() => validateWatchOptions(opts, true));
    assert.equal(s.code, 422);
    assert.equal(
      s.message,
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, ' +
        'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
    );
    // deletecollection and list read `watch` too: it selects the watch rules
    assert.deepEqual(statusOf(() => validateListOptions(opts, true)).message, s.message);
  });

  test("a continue token with a resourceVersion is the storage layer's 400", () => {
    const s = statusOf(() => validateListOptions(readListOptions(new URLSearchParams('resourceVersion=5&continue=abc')), true));
    assert.deepEqual([s.code, s.reason], [400, 'BadRequest']);
  });
});
