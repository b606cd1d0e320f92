/**
 * Sends fuzz cases and keeps the tally per endpoint: cases tried, accepted (2xx), refused by
 * status, refused by Node's HTTP parser before the app, and known findings. A case whose answer
 * breaks a rule throws, so fast-check shrinks it to a small counterexample.
 */
import type { Cell } from './figures.ts';
import { judgeAnswer, type RefusalRules } from './judge-answer.ts';
import { type RawRequest, type RawResponse, rawRequest } from './raw-http.ts';

/** The tally of one endpoint. */
export interface EndpointTally {
  cases: number;
  accepted: number;
  refused: Map<number, number>;
  parserRefusals: number;
  knownFindings: number;
}

/** A known defect of the system under test that a case may meet (reported, not hidden). */
export interface KnownFinding {
  name: string;
  /** Whether this answer to this request is the known defect. */
  matches(request: RawRequest, answer: RawResponse): boolean;
}

/** How one case is judged beyond the common refusal rules. */
export interface CaseCheck {
  /** Extra problems of this answer (e.g. a 2xx the input did not deserve). */
  judge?(answer: RawResponse): string[];
  /** Node's parser may refuse this request itself (oversized or malformed header). */
  parserMayRefuse?: boolean;
}

function decodedPath(path: string): string {
  try {
    return [...new URLSearchParams(path.split('?')[1] ?? '')].flat().join('\n');
  } catch {
    return '';
  }
}

function clip(text: string, n = 300): string {
  return text.length > n ? `${text.slice(0, n)}… (${text.length} characters)` : text;
}

/** Tallies and judges cases against one server. */
export class FuzzLedger {
  readonly tallies = new Map<string, EndpointTally>();
  readonly findings = new Map<string, number>();

  constructor(
    private readonly baseUrl: () => string,
    private readonly rules: RefusalRules,
    private readonly known: readonly KnownFinding[] = [],
  ) {}

  private tally(endpoint: string): EndpointTally {
    let t = this.tallies.get(endpoint);
    if (!t) {
      t = { cases: 0, accepted: 0, refused: new Map(), parserRefusals: 0, knownFindings: 0 };
      this.tallies.set(endpoint, t);
    }
    return t;
  }

  /** Sends one case; throws with the request and the problems when the answer breaks a rule. */
  async send(endpoint: string, request: RawRequest, check: CaseCheck = {}): Promise<RawResponse> {
    const answer = await rawRequest(this.baseUrl(), request);
    const t = this.tally(endpoint);
    t.cases++;
    // The path also decoded: a refusal may quote a query parameter it read.
    const requestText = `${request.path}\n${decodedPath(request.path)}\n${(request.headers ?? []).map(([k, v]) => `${k}: ${Buffer.from(v).toString('latin1')}`).join('\n')}\n${request.body === undefined ? '' : Buffer.from(request.body).toString('latin1')}`;
    const parser =
      check.parserMayRefuse &&
      (answer.status === 400 || answer.status === 431 || answer.status === 413) &&
      answer.body.length === 0;
    if (parser) {
      t.parserRefusals++;
      return answer;
    }
    const finding = this.known.find((k) => k.matches(request, answer));
    if (finding) {
      t.knownFindings++;
      this.findings.set(finding.name, (this.findings.get(finding.name) ?? 0) + 1);
      return answer;
    }
    if (answer.status >= 200 && answer.status < 300) t.accepted++;
    else t.refused.set(answer.status, (t.refused.get(answer.status) ?? 0) + 1);
    const problems = [
      ...judgeAnswer(answer, this.rules, requestText),
      ...(check.judge?.(answer) ?? []),
    ];
    if (problems.length > 0) {
      throw new Error(
        `${endpoint}: ${problems.join('; ')}\n  request: ${clip(requestText)}\n  answer: ${answer.status} ${clip(answer.text)}`,
      );
    }
    return answer;
  }

  /** The figures table: one row per endpoint. */
  rows(): Cell[][] {
    return [...this.tallies].map(([endpoint, t]) => [
      endpoint,
      t.cases,
      t.accepted,
      [...t.refused]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${status}×${n}`)
        .join(' '),
      t.parserRefusals,
      t.knownFindings,
    ]);
  }

  /** Cases tried over all endpoints. */
  total(): number {
    return [...this.tallies.values()].reduce((n, t) => n + t.cases, 0);
  }
}

/** Header of {@link FuzzLedger.rows}. */
export const LEDGER_HEADER = [
  'endpoint',
  'cases',
  '2xx (valid input)',
  '4xx refusals by status',
  "refused by Node's HTTP parser",
  'known findings',
];

/** How deep arrays and objects nest in a value (iterative: the value may be very deep). */
export function nestingDepth(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    deepest = Math.max(deepest, depth + 1);
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return deepest;
}
