// The CEL environment every kapi context starts from, as kube-apiserver 1.33 builds its base
// environment (k8s.io/apiserver/pkg/cel/environment): the libraries of a compatibility version.
// Expressions written now (a create, or an update that changes them) compile against
// compatibility version 1.32, the release before kapi's; expressions already stored compile
// against 1.33, so that a later release's expression keeps working after a downgrade. The one
// library apart is semver (introduced at 1.33): only stored expressions may use it.
//
// Each context then declares its own variables (`self`, `object`, `request`, `claims`...).

import { Environment } from '@marcbachmann/cel-js';
import { registerAuthorizerLibrary } from './authorizer-library.js';
import { registerTwoVarComprehensions } from './comprehensions.js';
import { registerFormatLibrary } from './format-library.js';
import { installCompileChecks } from './compile-checks.js';
import { registerKubernetesLibraries } from './k8s-library.js';
import { registerNetworkLibraries } from './network-library.js';
import { withRe2Matches } from './re2.js';
import { registerSemverLibrary } from './semver-library.js';
import { registerSetsLibrary } from './sets-library.js';
import { registerStringsLibrary } from './strings-library.js';

export type ExpressionAge = 'new' | 'stored';

export interface EnvironmentOptions {
  /** 'new': compiled at write time with the previous release's libraries (the default) */
  age?: ExpressionAge;
  /** declares the `authorizer` variable (admission policies and webhook match conditions) */
  authorizer?: boolean;
  /** false only where a typed check has already enforced it on the same expressions */
  homogeneousAggregateLiterals?: boolean;
}

/** a fresh base environment; the caller registers its variables on it */
export function celEnvironment(opts: EnvironmentOptions = {}): Environment {
  // homogeneous aggregate literals: `[1, 'a']` does not compile, as in every kube version
  installCompileChecks();
  let env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: opts.homogeneousAggregateLiterals ?? true });
  env = withRe2Matches(env);
  env = registerKubernetesLibraries(env);
  env = registerNetworkLibraries(env);
  env = registerFormatLibrary(env);
  env = registerSetsLibrary(env);
  env = registerStringsLibrary(env);
  env = registerTwoVarComprehensions(env);
  env = registerAuthorizerLibrary(env, { declareVariable: opts.authorizer ?? false });
  if (opts.age === 'stored') env = registerSemverLibrary(env);
  return env;
}
