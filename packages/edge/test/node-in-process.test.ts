import { describeEdgeSuite } from './support/edge-suite.ts';
import { startNodeEdge } from './support/harness.ts';

describeEdgeSuite({ runtime: 'node', inProcess: true, start: startNodeEdge });
