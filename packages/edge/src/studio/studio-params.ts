import type { ParamValue } from '@analytics-chart/protocol';
import type { CompiledDefinition } from '../registry/compile-definition.ts';
import { signerRefusal } from '../registry/signer-rules.ts';
import type { Session } from '../session/session.ts';
import { sessionMismatch } from '../session/session-check.ts';

/** One parameter as the studio's form shows it. */
export interface StudioParam {
  name: string;
  /** Filled from the session (or the session's tenant): shown, never chosen. */
  locked: boolean;
  value?: ParamValue;
  type: 'string' | 'number' | 'boolean';
  enum?: ParamValue[];
  pattern?: string;
  default?: ParamValue;
}

/** Why the studio refuses a request's parameters: a 400 (the form is wrong) or a 403 (the session may not). */
export class StudioParamError extends Error {
  override name = 'StudioParamError';
  readonly status: 400 | 403;
  constructor(status: 400 | 403, message: string) {
    super(message);
    this.status = status;
  }
}

/** The session's value for a parameter it locks, if it locks it. */
function lockedValue(
  compiled: CompiledDefinition,
  name: string,
  session: Session,
): ParamValue | undefined {
  const spec = compiled.params[name];
  if (!spec) return undefined;
  const claim = spec.from === 'session' ? (spec.claim ?? name) : name;
  // A signer `tenant` must equal the session's tenant (`sessionMismatch`), so it is locked too.
  if (spec.from === 'signer' && (name !== 'tenant' || session.tenant === undefined)) {
    return undefined;
  }
  const value = Object.hasOwn(session, claim) ? session[claim] : undefined;
  return typeof value === 'string' || typeof value === 'number' ? value : undefined;
}

/**
 * The parameters of a definition as this session sees them, or null when the session may not
 * sign it at all (its `signers` rule, or a session parameter the session lacks).
 */
export async function studioParamsOf(
  compiled: CompiledDefinition,
  session: Session,
): Promise<StudioParam[] | null> {
  if ((await signerRefusal(compiled, session, true)) !== null) return null;
  const out: StudioParam[] = [];
  for (const [name, spec] of Object.entries(compiled.params)) {
    const value = lockedValue(compiled, name, session);
    if (spec.from === 'session') {
      if (value === undefined) return null;
      out.push({
        name,
        locked: true,
        value,
        type: typeof value === 'number' ? 'number' : 'string',
      });
      continue;
    }
    const param: StudioParam = { name, locked: value !== undefined, type: spec.type ?? 'string' };
    if (value !== undefined) param.value = value;
    if (spec.enum) param.enum = [...spec.enum];
    if (spec.pattern !== undefined) param.pattern = spec.pattern;
    if (spec.default !== undefined) param.default = spec.default;
    out.push(param);
  }
  return out;
}

/**
 * The locked parameters of an id the studio mints for `session`: session parameters from the
 * session (a body may not set them), the rest from the body, then the same rules as the sign
 * route (the session's tenant, the definition's `signers`). Values are checked by the signer.
 */
export async function studioParams(
  compiled: CompiledDefinition,
  session: Session,
  given: Readonly<Record<string, ParamValue>>,
): Promise<Record<string, ParamValue>> {
  const params: Record<string, ParamValue> = {};
  for (const [name, value] of Object.entries(given)) {
    const spec = Object.hasOwn(compiled.params, name) ? compiled.params[name] : undefined;
    if (!spec) throw new StudioParamError(400, `Parameter '${name}' is not one this chart takes.`);
    if (spec.from === 'session') {
      throw new StudioParamError(400, `Parameter '${name}' comes from your session.`);
    }
    params[name] = value;
  }
  for (const name of Object.keys(compiled.params)) {
    const value = lockedValue(compiled, name, session);
    if (value === undefined) {
      if (compiled.params[name]?.from === 'session') {
        throw new StudioParamError(403, 'Your session may not publish this chart.');
      }
      continue;
    }
    // The session's own value stands; the one rule below refuses a different one.
    if (!Object.hasOwn(params, name)) params[name] = value;
  }
  const refusal =
    sessionMismatch(session, params, compiled) ?? (await signerRefusal(compiled, session, true));
  if (refusal) throw new StudioParamError(403, 'Your session may not publish this chart.');
  return params;
}
