// Compile checks of the CEL expressions an admissionregistration object carries. Expressions
// are compiled with the admission policy plugin's own environment (server/cel/
// admission-policy.ts), so what validation accepts is what the plugin can run. That environment always
// declares `params`, `variables` and `authorizer`; kube-apiserver declares them only where
// they exist (params with a paramKind, variables with declared variables, authorizer except in
// messageExpression), so references to the undeclared ones are found here by a scan of the
// expression's identifiers and refused with cel-go's "undeclared reference" message. Declared
// variables are an object type whose fields carry each variable's type, so the checker itself
// refuses `variables.<name>` of a name not declared and a misuse of a declared one.

import { compile, type PolicyFlavour, type VariableTypes } from '../../cel/admission-policy.js';
import { celIssue } from '../../cel/issues.js';
import { fieldErrors, type FieldError } from '../../machinery/validation/field-error.js';

export type ResultType = 'bool' | 'string' | 'string-or-null' | 'any';

export interface Declarations {
  params: boolean;
  /** the variables an expression may read, typed (undefined: `variables` is not declared at all) */
  variables?: VariableTypes;
  authorizer: boolean;
}

/** the expression with its string literals blanked, so identifiers can be scanned */
function withoutStrings(expr: string): string {
  return expr.replace(/[rRbB]{0,2}("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')/g, (m) => ' '.repeat(m.length));
}

/** the first top-level reference to one of `names` (not a field selection `x.name`) */
function firstReference(expr: string, names: ReadonlySet<string>): { name: string; offset: number } | undefined {
  const text = withoutStrings(expr);
  const ident = /[A-Za-z_][A-Za-z0-9_]*/g;
  for (let m = ident.exec(text); m; m = ident.exec(text)) {
    if (!names.has(m[0])) continue;
    let j = m.index - 1;
    while (j >= 0 && /\s/.test(text[j]!)) j--;
    if (j >= 0 && (text[j] === '.' || /[A-Za-z0-9_]/.test(text[j]!))) continue;
    return { name: m[0], offset: m.index };
  }
  return undefined;
}

/** The checked expression: why it does not compile, in kube's words where we know them
 *  (`error`), and the type the checker gave it when it does (`outputType`). */
export function checkExpression(
  expression: string,
  want: ResultType,
  decls: Declarations,
  flavour: PolicyFlavour = 'validating',
): { error?: string; outputType?: string } {
  const program = compile(expression, want, 'new', flavour, decls.variables);
  if (program.compileError) {
    const reason = program.compileError.replace(/^compilation error: /, '');
    // kube reports a wrong result type without the "compilation failed" prefix
    return { error: reason.startsWith('must evaluate to ') ? reason : `compilation failed: ${reason}` };
  }
  const undeclared = new Set<string>();
  if (!decls.params) undeclared.add('params');
  if (!decls.variables) undeclared.add('variables');
  if (!decls.authorizer) undeclared.add('authorizer');
  const ref = firstReference(expression, undeclared);
  if (ref)
    return { error: `compilation failed: ${celIssue(expression, ref.offset, `undeclared reference to '${ref.name}' (in container '')`)}` };
  return { outputType: program.outputType };
}

/** why the expression does not compile, in kube's words where we know them; undefined: it compiles */
export function celCompileError(
  expression: string,
  want: ResultType,
  decls: Declarations,
  flavour: PolicyFlavour = 'validating',
): string | undefined {
  return checkExpression(expression, want, decls, flavour).error;
}

/** the field error for an expression that does not compile ([] when it does) */
export function celErrors(
  path: string,
  expression: string,
  want: ResultType,
  decls: Declarations,
  flavour: PolicyFlavour = 'validating',
): FieldError[] {
  const err = celCompileError(expression, want, decls, flavour);
  return err ? [fieldErrors.invalid(path, expression, err)] : [];
}
