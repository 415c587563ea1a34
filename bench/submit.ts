/**
 * `npm run bench:submit`: the engine runs in this process, with the heap as the
 * paybatch command keeps it (src/cli/main.ts): set before anything else is
 * loaded, or the young generation grows while the modules load, and stays
 * grown. The benchmark itself is submit-run.ts.
 */
import { keepHeapNearLive } from '../src/heap.js';

keepHeapNearLive();
await import('./submit-run.js');
