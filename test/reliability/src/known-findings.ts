/**
 * Defects of the system under test that the hostile-input runs meet, reported to the owners of
 * the parts (see the README's "Reliability and security" section). Each matcher accepts exactly
 * the defective answer to exactly the triggering input, so the case is counted and shown as a
 * finding while every other rule still applies to it and any other failure still fails.
 */
import { readBody } from './engine-oracle.ts';
import { type KnownFinding, nestingDepth } from './fuzz-ledger.ts';

/**
 * Engine: an event payload sent as a JSON object nested thousands of levels deep makes
 * `/api/log` and `/api/bulk-log` answer 500 "internal error" instead of a 400: the compact
 * re-serialisation (`JSON.stringify`) and the surrogate check recurse past the stack, and the
 * RangeError reaches the app's error handler (which also logs its stack).
 */
export const ENGINE_DEEP_PAYLOAD_500: KnownFinding = {
  name: 'engine: ingest of an object payload nested ≥ 1,000 levels answers 500 instead of 400',
  matches(request, answer) {
    if (answer.status !== 500 || answer.text !== '{"error":"internal error"}') return false;
    if (!/\/api\/(bulk-)?log$/.test(request.path)) return false;
    const body = readBody(Buffer.from(request.body ?? ''));
    return body.ok && nestingDepth(body.value) >= 1000;
  },
};
