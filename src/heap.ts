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
 *   what is garbage within milliseconds. It stays at its first 1 MB a half
 *   (growth factor 1): `run` on 10,000 rows peaks at 149 MB, not 177; sending
 *   costs a few percent more CPU (bench:submit).
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
import { setFlagsFromString } from 'node:v8';

export function keepHeapNearLive(): void {
  setFlagsFromString('--heap-growing-percent=25');
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--liftoff-only');
}
