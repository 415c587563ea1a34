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
 * and can be set from here.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** Both halves of the young generation together. */
const YOUNG_GENERATION_BYTES = 4 * 1024 * 1024;
/** The same while sending. */
const SENDING_YOUNG_GENERATION_BYTES = 8 * 1024 * 1024;

/** Set by keepHeapNearLive: only a process whose heap paybatch keeps is grown for sending. */
let kept = false;

export function keepHeapNearLive(): void {
  kept = true;
  growYoungGeneration(YOUNG_GENERATION_BYTES);
  holdHeapFlags();
}

/** Set when V8 would not grow the young generation that far (a launch flag capped it): not tried again. */
let sendingRoomCapped = false;

/**
 * Grows the young generation for sending (see above); nothing when it is that large already. Asked at every batch's
 * sending: V8 may have shrunk it while the process was quiet, and growing it again takes some 20 ms.
 */
export function roomForSending(): void {
  if (!kept || sendingRoomCapped || youngGenerationBytes() >= SENDING_YOUNG_GENERATION_BYTES) return;
  growYoungGeneration(SENDING_YOUNG_GENERATION_BYTES);
  holdHeapFlags();
  // Allocating until it grows is bounded, but not cheap when it never does: once is enough to know.
  sendingRoomCapped = youngGenerationBytes() < SENDING_YOUNG_GENERATION_BYTES;
}

/**
 * The same flags, set again from a worker thread as its first step: a worker's
 * start puts them back as at launch for the whole process, and the main
 * thread's young generation would grow until they are set again.
 */
export function holdHeapFlags(): void {
  setFlagsFromString('--heap-growing-percent=25');
  setFlagsFromString('--liftoff-only');
  setFlagsFromString('--semi-space-growth-factor=1');
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
