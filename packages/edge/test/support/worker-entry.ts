/** The module worker the workerd suite runs: the Workers adapter with the suite's config. */
import { createWorker } from '../../src/adapter/workers/index.ts';
import { testEdgeOverrides } from './test-config.ts';

export default createWorker(testEdgeOverrides, { basePath: '/analytics' });
