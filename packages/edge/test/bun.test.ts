import { describeEdgeSuite } from './support/edge-suite.ts';
import { startRuntimeEdge } from './support/harness.ts';
import { describeRuntimeServer } from './support/runtime-server-suite.ts';

describeEdgeSuite({ runtime: 'bun', start: (env) => startRuntimeEdge('bun', env) });
describeRuntimeServer('bun');
