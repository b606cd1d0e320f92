import { describeEdgeSuite } from './support/edge-suite.ts';
import { startWorkerdEdge } from './support/harness.ts';

describeEdgeSuite('workerd', startWorkerdEdge);
