import { describeEdgeSuite } from './support/edge-suite.ts';
import { startWorkerdEdge } from './support/harness.ts';

describeEdgeSuite({ runtime: 'workerd', start: startWorkerdEdge });
