/**
 * The in-process counterpart of the fault proxy: it stands between `engineBackend` and the real
 * engine's `query`, records every call and can be told to fail the way the proxy fails over
 * HTTP (a status, a hang, a malformed answer, an engine that throws).
 */
import type { Engine } from '@analytics-chart/engine';
import type { QueryableEngine } from '../../src/backend/engine-backend.ts';
import type { FaultMode, ProxiedCall } from './fault-proxy.ts';

export interface EngineTap extends QueryableEngine {
  calls: ProxiedCall[];
  mode(mode: FaultMode, times?: number): void;
}

export function engineTap(engine: Engine): EngineTap {
  let modes: { mode: FaultMode; times: number }[] = [];
  let standing: FaultMode = { kind: 'ok' };
  const tap: EngineTap = {
    calls: [],
    mode(mode, times) {
      if (times === undefined) {
        standing = mode;
        modes = [];
      } else modes.push({ mode, times });
    },
    async query(body) {
      tap.calls.push({
        body: body as Record<string, unknown>,
        headers: {},
        url: '/api/visualize/data',
      });
      const next = modes[0];
      let mode = standing;
      if (next) {
        mode = next.mode;
        next.times -= 1;
        if (next.times <= 0) modes.shift();
      }
      switch (mode.kind) {
        case 'ok':
          return engine.query(body);
        case 'slow':
          await new Promise((resolve) => setTimeout(resolve, mode.ms));
          return engine.query(body);
        case 'hang':
          return new Promise(() => {});
        case 'status':
          return {
            status: mode.status,
            body: mode.body ?? { error: `tap failure ${mode.status}` },
          };
        case 'malformed':
          return { status: 200, body: '{"result": [1, 2' };
        case 'close':
          throw new Error('the engine is closed');
      }
    },
  };
  return tap;
}
