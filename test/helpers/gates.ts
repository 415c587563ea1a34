/** Steps held and let go by a test, for code whose order of events is the point (the call slots). */

/** A promise and the function that settles it. */
export function gate(): { opened: Promise<void>; open(): void } {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => { open = resolve; });
  return { opened, open };
}

/** `n` turns of the event loop: whatever could run meanwhile has. */
export async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}
