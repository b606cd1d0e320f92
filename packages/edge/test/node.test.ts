import { describeEdgeSuite } from './support/edge-suite.ts';
import { startNodeEdge } from './support/harness.ts';

describeEdgeSuite({ runtime: 'node', start: startNodeEdge });
