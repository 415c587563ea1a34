/**
 * How V8 sizes the heap, set at start for the process and its worker threads
 * (V8's flags are the process's):
 *
 * - Old generation: V8 grows it after each collection by a factor it chooses,
 *   up to four times what is live: while sending, `run` held 230 MB for 30 MB
 *   live. A fixed growth of a quarter keeps it near what is live (180 MB on the
 *   same 10,000 rows, about a tenth more CPU spent collecting). It bounds
 *   nothing: the heap still grows as far as it must.
 * - Young generation: V8 doubles it, up to 16 MB for each of its two halves,
 *   as soon as objects outlive a collection, and keeps it: 32 MB resident for
 *   what is garbage within milliseconds. It is held at 2 MB a half (growth
 *   factor 1 once there): at its first 1 MB, collecting it took 164 us of CPU
 *   per row sent (bench:submit, 1,658 rows/s), 92 at 2 MB (2,278), for 2 MB
 *   more. V8 has no setting for its size once running, only for its growth: it
 *   is grown at start by allocating until it has doubled, a few milliseconds.
 *   While rows are sent it is grown once more, to 4 MB a half: sending makes
 *   short-lived objects fast (rows, answers, decisions), and at 2 MB a half
 *   collecting them took 84 to 98 us of CPU per row sent, 58 to 61 at 4 MB
 *   (10,000 rows sent with no added latency, interleaved runs), for 4 MB more.
 *   Intake, the highest point of memory, is not affected: a file taken in
 *   while nothing is sent keeps 2 MB a half.
 *
 * - WebAssembly: the HTTP client parses answers with llhttp, compiled to
 *   WebAssembly. V8 compiles it a second time, optimised, on the first calls:
 *   26 MB for a moment, the highest point of `run` on 10,000 rows (149 MB, 123
 *   without it). Its baseline compiler alone (Liftoff) parses answers fast enough.
 *
 * The maximum young size is fixed when the heap is made, so a launch flag would
 * be needed to cap it; the growth factor is read each time V8 would grow it,
 * and can be set from here. The figures are the configuration's `process` keys
 * (src/config/process.ts), set once by the CLI as a command starts
 * (cli/process-tuning.ts); the defaults are those measured above.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import type { ProcessConfig } from './config/process.js';

/** The measured figures: the configuration's defaults, for benchmarks and tests that start no command. */
export const MEASURED_HEAP: ProcessConfig = { young_generation_mb: 4, sending_young_generation_mb: 8, heap_growing_percent: 25, wasm_baseline_only: true };

const MIB = 1024 * 1024;

/** Set by keepHeapNearLive: only a process whose heap paybatch keeps is tuned, and grown for sending. */
let kept: ProcessConfig | null = null;

/** Tunes this process's heap as `settings` say (once, at start; see cli/process-tuning.ts). */
export function keepHeapNearLive(settings: ProcessConfig = MEASURED_HEAP): void {
  kept = settings;
  keepHeapAsSet();
}

/** What keepHeapNearLive set, for a worker thread to set again as it starts (in its workerData): null when nothing was. */
export function heapSettings(): ProcessConfig | null {
  return kept;
}

/** Sets the heap again as keepHeapNearLive did (a worker's start put the flags back); nothing in a process not kept. */
export function keepHeapAsSet(): void {
  if (!kept) return;
  if (kept.young_generation_mb > 0) growYoungGeneration(kept.young_generation_mb * MIB);
  holdHeapFlags(kept);
}

/** Set when V8 would not grow the young generation that far (a launch flag capped it): not tried again. */
let sendingRoomCapped = false;

/**
 * Grows the young generation for sending (see above); nothing when it is that large already. Asked at every batch's
 * sending: V8 may have shrunk it while the process was quiet, and growing it again takes some 20 ms.
 */
export function roomForSending(): void {
  const bytes = (kept?.sending_young_generation_mb ?? 0) * MIB;
  if (!kept || sendingRoomCapped || youngGenerationBytes() >= bytes) return;
  growYoungGeneration(bytes);
  holdHeapFlags(kept);
  // Allocating until it grows is bounded, but not cheap when it never does: once is enough to know.
  sendingRoomCapped = youngGenerationBytes() < bytes;
}

/**
 * The flags of `settings`, set again from a worker thread as its first step (given in its workerData by whoever
 * started it, heapSettings()): a worker's start puts them back as at launch for the whole process, and the main
 * thread's young generation would grow until they are set again. Nothing when null (a process not kept).
 */
export function holdHeapFlags(settings: ProcessConfig | null | undefined): void {
  if (!settings) return;
  // Each set either way, so that the configuration may undo what the start held (0 and 2 are V8's own).
  setFlagsFromString(`--heap-growing-percent=${settings.heap_growing_percent}`);
  setFlagsFromString(settings.wasm_baseline_only ? '--liftoff-only' : '--no-liftoff-only');
  setFlagsFromString(`--semi-space-growth-factor=${settings.young_generation_mb > 0 ? 1 : 2}`);
}

/**
 * The very first step of a command, before it loads its modules and reads its configuration: the flags held as the
 * defaults say, nothing grown, so that what loads does not grow the young generation past the configured size first
 * (loading the configuration's schema alone doubled it). The configuration then sets the heap (keepHeapNearLive).
 */
export function holdHeapUntilConfigured(): void {
  holdHeapFlags(MEASURED_HEAP);
}

const youngGenerationBytes = (): number => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;

/** Rounds of allocation with no growth after which V8 is taken not to grow it further (capped by a launch flag). */
const ROUNDS_WITHOUT_GROWTH = 1000;

/**
 * Short-lived objects, some surviving a collection or two, until V8 has grown the young generation to `bytes`
 * (bounded: it may not; a growth comes every hundred rounds or so, so a thousand without one is a cap).
 */
function growYoungGeneration(bytes: number): void {
  if (youngGenerationBytes() >= bytes) return;
  setFlagsFromString('--semi-space-growth-factor=2');
  let survivors: { at: number }[] = [];
  let size = youngGenerationBytes();
  for (let round = 0, lastGrowth = 0; round < 10_000 && size < bytes && round - lastGrowth < ROUNDS_WITHOUT_GROWTH; round++) {
    for (let at = 0; at < 1000; at++) {
      survivors.push({ at });
      if (survivors.length > 30_000) survivors = [];
    }
    const now = youngGenerationBytes();
    if (now > size) lastGrowth = round;
    size = now;
  }
}

/**
 * Grows a worker thread's young generation to `mb` (its halves, each), the flags then held as `settings` say: for a
 * thread whose work makes short-lived objects fast (audit verify's: at the configured 4 MB a half, collecting them
 * took a third of its CPU).
 */
export function growThreadYoungGeneration(mb: number, settings: ProcessConfig | null): void {
  growYoungGeneration(mb * MIB);
  holdHeapFlags(settings);
}

/** The settings a worker thread was given by whoever started it (workerData.heap, from heapSettings()). */
export const heapGiven = (data: unknown): ProcessConfig | null => (data as { heap?: ProcessConfig | null } | null)?.heap ?? null;
