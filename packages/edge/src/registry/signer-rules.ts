import type { Session } from '../session/session.ts';
import type { CompiledDefinition } from './compile-definition.ts';

/**
 * Why a session may not have an id of this definition, or null when it may: the definition's
 * `signers` rule (claims, then the `allow` predicate). For the operator's log; the viewer gets a
 * fixed sentence. `signing` is true on the sign route, where `sessions: false` also refuses.
 */
export async function signerRefusal(
  compiled: CompiledDefinition,
  session: Session,
  signing: boolean,
): Promise<string | null> {
  const rule = compiled.definition.signers;
  if (!rule) return null;
  if (signing && rule.sessions === false) return 'signed by the server only';
  for (const [claim, admitted] of Object.entries(rule.claims ?? {})) {
    const value = Object.hasOwn(session, claim) ? session[claim] : undefined;
    const values = Array.isArray(value) ? value : [value];
    if (!values.some((v) => admitted.includes(v as never))) return `${claim} is not admitted`;
  }
  if (rule.allow && (await rule.allow(session)) !== true) return 'the allow rule refused';
  return null;
}
